package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// ServeStdio speaks MCP on in/out until in closes or ctx ends: one JSON-RPC
// message per line each way. Nothing but protocol is written to out; logs
// go to the logger (stderr).
//
// cordon frames stdio itself and hands each message to mcp-go's
// HandleMessage, rather than run mcp-go's StdioServer, which parsed every
// message five times before handing it on, passed it through three
// goroutines, and encoded a tool's result as a map that encoding/json then
// scanned again: together a third of the server's CPU for a small
// read_file.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	t := &stdioTransport{srv: s, out: &stdioWriter{w: out}, in: bufio.NewReaderSize(in, 64<<10)}
	t.session = newStdioSession(t.out)
	if err := s.mcp.RegisterSession(ctx, t.session); err != nil {
		return fmt.Errorf("register the stdio session: %w", err)
	}
	defer s.mcp.UnregisterSession(context.WithoutCancel(ctx), stdioSessionID)
	ctx, cancel := context.WithCancel(s.mcp.WithContext(ctx, t.session))
	defer cancel()
	go t.session.forwardNotifications(ctx, t.logSendError)

	w := startWorkers(func() (request, error) { return t.next(ctx) },
		func(r request) { t.handle(r.ctx, r.id, r.line) })
	var err error
	select {
	case err = <-w.ended:
		if errors.Is(err, io.EOF) {
			err = nil
		} else {
			err = fmt.Errorf("read the client's messages: %w", err)
		}
	case <-ctx.Done():
		err = ctx.Err()
	}
	w.stop(cancel) // none outlives the connection
	return err
}

// stdioTransport is one stdio connection: the client's session, its
// messages and the one writer their answers share.
type stdioTransport struct {
	srv     *Server
	session *stdioSession
	in      *bufio.Reader // read by one worker at a time
	out     *stdioWriter
}

// next reads lines until one is a request, handling the rest (answers,
// notifications, what is not a request) on the way.
func (t *stdioTransport) next(ctx context.Context) (request, error) {
	for {
		line, tooLong, err := readLine(t.in, maxRequestBody)
		switch {
		case tooLong:
			t.reply(nil, mcp.INVALID_REQUEST, fmt.Sprintf("request too large: cordon accepts at most %d MiB in one message; the line was dropped", maxRequestBody>>20))
		case len(bytes.TrimSpace(line)) > 0:
			if r, ok := t.receive(ctx, line); ok {
				return r, nil // a last line without a newline is served too
			}
		}
		if err != nil {
			return request{}, err
		}
	}
}

// readLine reads up to and including the next newline. A line longer than
// max is read to its end but not kept: tooLong says so.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		frag, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > max {
				line, tooLong = nil, true
			} else {
				line = append(line, frag...) // the handler keeps it: a copy
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, tooLong, err
		}
	}
}

// receive handles one message, unless it is a request, which it returns
// for a worker to serve: a request may wait on the client (an
// elicitation), and the client's answer must still be read. A
// notification is handled in turn; a response goes to the request of
// cordon's that waits for it.
func (t *stdioTransport) receive(ctx context.Context, line []byte) (request, bool) {
	m, id, problem := parseMessage(line, overStdio)
	if problem != "" {
		if !json.Valid(line) {
			t.reply(nil, mcp.PARSE_ERROR, notJSON(overStdio))
		} else {
			t.reply(id, mcp.INVALID_REQUEST, "invalid request: "+problem)
		}
		return request{}, false
	}
	if m.Method == "" {
		if !t.session.deliver(m.ID, line) {
			t.srv.log.Debug().RawJSON("id", m.ID).Msg("dropped a response to no request of cordon's")
		}
		return request{}, false
	}
	if m.ID == nil {
		t.handle(ctx, nil, line)
		return request{}, false
	}
	if why := t.srv.badCursor(m); why != "" {
		t.reply(m.ID, mcp.INVALID_PARAMS, why)
		return request{}, false
	}
	return request{ctx, m.ID, m.Method, line}, true
}

// handle runs one message through mcp-go and writes its answer, if any.
// A panic outside a tool handler (those recover on their own) answers
// the request with an internal error rather than end the server.
func (t *stdioTransport) handle(ctx context.Context, id json.RawMessage, line []byte) {
	defer func() {
		if r := recover(); r != nil {
			t.srv.log.Error().Interface("panic", r).Msg("recovered a panic while handling a message")
			if id != nil {
				t.reply(id, mcp.INTERNAL_ERROR, fmt.Sprintf("internal error: %v", r))
			}
		}
	}()
	if answer := t.srv.mcp.HandleMessage(ctx, line); answer != nil {
		if err := t.out.send(answer); err != nil {
			t.logSendError(err)
		}
	}
}

// reply answers id (nil: null) with a JSON-RPC error.
func (t *stdioTransport) reply(id json.RawMessage, code int, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	if err := t.out.send(rpcError{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Error: rpcErrorDetail{code, message}}); err != nil {
		t.logSendError(err)
	}
}

func (t *stdioTransport) logSendError(err error) {
	t.srv.log.Warn().Err(err).Msg("could not write a message to the client")
}

// stdioWriter writes whole messages, one line each, one at a time.
type stdioWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// send encodes msg outside the lock and writes it in one Write.
func (w *stdioWriter) send(msg any) error {
	buf := encodeBuffers.Get().(*bytes.Buffer)
	defer putEncodeBuffer(buf)
	if err := encodeMessage(buf, msg); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.w.Write(buf.Bytes())
	return err
}
