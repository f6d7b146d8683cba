package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio speaks MCP on in/out until in closes or ctx ends. Nothing but
// protocol is written to out; logs go to the logger (stderr).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	std := server.NewStdioServer(s.mcp)
	std.SetErrorLogger(log.New(s.log, "", 0))
	w := &lockedWriter{w: out}
	return std.Listen(ctx, s.screenStdio(in, w), w)
}

// screenStdio passes in's messages on to mcp-go, one line each, except
// those cordon answers itself, as over HTTP (http_cursor.go): a tools/list
// with a cursor no answer handed out.
func (s *Server) screenStdio(in io.Reader, out io.Writer) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				if reply := s.stdioRefusal(line); reply != nil {
					out.Write(reply)
				} else if _, werr := pw.Write(line); werr != nil {
					return // mcp-go stopped reading
				}
			}
			if err != nil {
				pw.CloseWithError(err) // io.EOF reads as a plain end
				return
			}
		}
	}()
	return pr
}

var toolsListMethod = []byte(`"` + mcp.MethodToolsList + `"`)

// stdioRefusal is the error line that answers line, or nil to pass it on.
// Only a message that names tools/list is parsed.
func (s *Server) stdioRefusal(line []byte) []byte {
	if !bytes.Contains(line, toolsListMethod) || !json.Valid(line) {
		return nil
	}
	m, _, problem := parseMessage(line)
	if problem != "" || m.ID == nil {
		return nil // mcp-go answers what is not a request
	}
	why := s.badCursor(m)
	if why == "" {
		return nil
	}
	b, _ := json.Marshal(rpcError{JSONRPC: "2.0", ID: m.ID, Error: rpcErrorDetail{mcp.INVALID_PARAMS, why}})
	return append(b, '\n')
}

// lockedWriter keeps whole writes apart: mcp-go's answers and cordon's
// own refusals share stdout, and each is one Write of one line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
