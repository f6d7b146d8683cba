package mcpserver

import (
	"context"
	"net/url"
	"time"

	"github.com/cordonhq/cordon/tools"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// rootsTimeout bounds the roots/list request made before a session's first
// call.
const rootsTimeout = 5 * time.Second

// ensureRoots fetches the client's roots once per session (again after
// roots/list_changed). Roots only ever narrow the writable roots; a client
// that declares none, or whose answer fails, keeps the configured ones.
// Roots are deprecated in 2026-07-28 and not fetched there.
func (s *Server) ensureRoots(ctx context.Context, sess *tools.Session) {
	if _, known := sess.ClientRoots(); known || server.IsModernRequest(ctx) {
		return
	}
	cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	if !ok || cs.GetClientCapabilities().Roots == nil {
		sess.SetClientRoots(nil)
		return
	}
	rctx, cancel := context.WithTimeout(ctx, rootsTimeout)
	defer cancel()
	res, err := s.mcp.RequestRoots(rctx, mcp.ListRootsRequest{})
	if err != nil {
		s.log.Warn().Err(err).Str("session", sess.ID).Msg("could not list the client's roots; keeping the configured writable roots")
		sess.SetClientRoots(nil)
		return
	}
	var roots []string
	for _, r := range res.Roots {
		u, err := url.Parse(r.URI)
		if err != nil || u.Scheme != "file" || u.Path == "" {
			s.log.Warn().Str("root", r.URI).Msg("ignoring a client root that is not a file:// URI")
			continue
		}
		roots = append(roots, u.Path)
	}
	sess.SetClientRoots(roots)
	if len(roots) == 0 {
		return
	}
	eff, err := s.tb.NoteClientRoots(tools.Call{Session: sess})
	ev := s.log.Info()
	if eff.SetAside {
		ev = s.log.Warn()
	}
	ev.Err(err).Str("session", sess.ID).Strs("roots", roots).Strs("writable_roots", eff.WritableRoots).Msg(eff.Note)
}

// rootsChanged makes the session fetch its roots again on its next call.
func (s *Server) rootsChanged(ctx context.Context, _ mcp.JSONRPCNotification) {
	if sess, err := s.sessionFor(ctx); err == nil {
		sess.InvalidateRoots()
	}
}
