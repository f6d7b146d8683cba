package mcpserver

import (
	"context"
	"io"
	"log"

	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio speaks MCP on in/out until in closes or ctx ends. Nothing but
// protocol is written to out; logs go to the logger (stderr).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	std := server.NewStdioServer(s.mcp)
	std.SetErrorLogger(log.New(s.log, "", 0))
	return std.Listen(ctx, in, out)
}
