package mcpserver

import (
	"context"

	"github.com/cordonhq/cordon/tools"
	"github.com/mark3labs/mcp-go/server"
)

// ensureClient looks the client up in the table of client habits once
// per session, by the clientInfo.name of its initialize, so that results
// are shaped for what it passes on to its model. A client that gave no
// name, or one not in the table, gets the safe default.
func (s *Server) ensureClient(ctx context.Context, sess *tools.Session) {
	if sess.ClientKnown() {
		return
	}
	name := ""
	if cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		name = cs.GetClientInfo().Name
	}
	h := tools.HabitsFor(name)
	sess.SetClient(h)
	s.log.Debug().Str("session", sess.ID).Str("client", name).Str("delivers", string(h.Delivers)).Int("budget", h.Budget).Msg("client habits")
}
