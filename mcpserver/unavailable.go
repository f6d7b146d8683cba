package mcpserver

import (
	"context"
	"strings"

	"github.com/cordonhq/cordon/tools"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rs/zerolog"
)

// NewUnavailable builds the server of a cordon that cannot work — its
// configuration cannot be read, or names a workspace cordon must refuse.
// A server that exited instead would show the human only "connection
// closed" in their client; this one answers the handshake, its
// instructions' first line says cordon is not working and why, and every
// tool call returns SANDBOX_UNAVAILABLE with reason (which names the file,
// the line and the fix). Nothing runs and nothing is logged to a session.
func NewUnavailable(version, reason string, logger zerolog.Logger) *Server {
	reason = strings.TrimSpace(reason)
	s := &Server{cfg: Config{Version: version, Logger: logger}, states: newStateSigner(), log: logger, sessions: map[string]*tools.Session{}}
	s.mcp = server.NewMCPServer("cordon", version,
		server.WithInstructions(unavailableInstructions(reason)),
		server.WithToolCapabilities(false),
		server.WithRecovery(),
	)
	for _, t := range tools.Tools() {
		s.mcp.AddTool(mcpTool(t), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return toResult((&tools.ToolError{Code: tools.CodeUnavailable, Message: tools.UnavailableMessage(reason)}).AsResult()), nil
		})
	}
	return s
}

// unavailableInstructions put the reason on the first line, the one a
// client may show by itself.
func unavailableInstructions(reason string) string {
	return "cordon is not working: " + reason + "\n" + tools.UnavailableInstructions
}
