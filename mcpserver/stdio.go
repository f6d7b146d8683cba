package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio speaks MCP on in/out until in closes or ctx ends. Nothing but
// protocol is written to out; logs go to the logger (stderr).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	std := server.NewStdioServer(s.mcp)
	std.SetErrorLogger(log.New(s.log, "", 0))
	w := &lockedWriter{w: out}
	screened := s.screenStdio(in, w)
	defer screened.Close() // the screen stops with the server
	return std.Listen(ctx, screened, w)
}

// screenStdio passes in's messages on to mcp-go, one line each, except
// those cordon answers itself, as over HTTP (http_cursor.go): a tools/list
// with a cursor no answer handed out.
func (s *Server) screenStdio(in io.Reader, out io.Writer) io.ReadCloser {
	pr, pw := io.Pipe()
	sc := &screen{PipeReader: pr}
	go func() {
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				if reply := s.stdioRefusal(line); reply == nil {
					_, err = pw.Write(line)
				} else if sc.stopped.Load() {
					err = io.ErrClosedPipe
				} else {
					out.Write(reply)
				}
			}
			if err != nil {
				pw.CloseWithError(err) // io.EOF reads as a plain end
				return
			}
		}
	}()
	return sc
}

// screen is what mcp-go reads; closing it stops the screening too (it
// answers nothing more once the server has stopped).
type screen struct {
	*io.PipeReader
	stopped atomic.Bool
}

func (sc *screen) Close() error {
	sc.stopped.Store(true)
	return sc.PipeReader.Close()
}

var toolsListMethod = []byte(`"` + mcp.MethodToolsList + `"`)

// maxEscapedCheck is the largest line parsed for an escaped method name.
const maxEscapedCheck = 4 << 10

// stdioRefusal is the error line that answers line, or nil to pass it on.
// A message is parsed only where it names tools/list, or might in JSON
// escapes ("tools\/list"): a small one with a backslash. A large one
// (file content) is never a tools/list.
func (s *Server) stdioRefusal(line []byte) []byte {
	mayName := bytes.Contains(line, toolsListMethod) || (len(line) <= maxEscapedCheck && bytes.IndexByte(line, '\\') >= 0)
	if !mayName || !json.Valid(line) {
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
