package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// stdioSessionID names the one protocol session of a stdio server; tools
// calls on it run in the process session (sessionFor).
const stdioSessionID = "stdio"

// stdioSession is the client of a stdio server as mcp-go sees it: what it
// said of itself at initialize, its log level, and the requests cordon has
// sent it (elicitation, roots) that wait for their answers.
type stdioSession struct {
	out           *stdioWriter
	notifications chan mcp.JSONRPCNotification

	initialized     atomic.Bool
	logLevel        atomic.Value // mcp.LoggingLevel
	clientInfo      atomic.Value // mcp.Implementation
	capabilities    atomic.Value // mcp.ClientCapabilities
	protocolVersion atomic.Value // string

	lastID  atomic.Int64
	mu      sync.Mutex
	pending map[int64]chan rpcReply
}

// rpcReply is the client's answer to a request cordon sent it.
type rpcReply struct {
	Result json.RawMessage `json:"result"`
	Error  *rpcErrorDetail `json:"error"`
}

func newStdioSession(out *stdioWriter) *stdioSession {
	return &stdioSession{out: out, notifications: make(chan mcp.JSONRPCNotification, 100), pending: map[int64]chan rpcReply{}}
}

var (
	_ server.ClientSession              = (*stdioSession)(nil)
	_ server.SessionWithLogging         = (*stdioSession)(nil)
	_ server.SessionWithClientInfo      = (*stdioSession)(nil)
	_ server.SessionWithProtocolVersion = (*stdioSession)(nil)
	_ server.SessionWithElicitation     = (*stdioSession)(nil)
	_ server.SessionWithRoots           = (*stdioSession)(nil)
)

func (s *stdioSession) SessionID() string { return stdioSessionID }

func (s *stdioSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.notifications }

func (s *stdioSession) Initialize() {
	s.logLevel.Store(mcp.LoggingLevelError)
	s.initialized.Store(true)
}

func (s *stdioSession) Initialized() bool { return s.initialized.Load() }

func (s *stdioSession) SetLogLevel(level mcp.LoggingLevel) { s.logLevel.Store(level) }

func (s *stdioSession) GetLogLevel() mcp.LoggingLevel {
	if l, ok := s.logLevel.Load().(mcp.LoggingLevel); ok {
		return l
	}
	return mcp.LoggingLevelError
}

func (s *stdioSession) GetClientInfo() mcp.Implementation {
	v, _ := s.clientInfo.Load().(mcp.Implementation)
	return v
}

func (s *stdioSession) SetClientInfo(info mcp.Implementation) { s.clientInfo.Store(info) }

func (s *stdioSession) GetClientCapabilities() mcp.ClientCapabilities {
	v, _ := s.capabilities.Load().(mcp.ClientCapabilities)
	return v
}

func (s *stdioSession) SetClientCapabilities(c mcp.ClientCapabilities) { s.capabilities.Store(c) }

func (s *stdioSession) ProtocolVersion() string {
	v, _ := s.protocolVersion.Load().(string)
	return v
}

// SetProtocolVersion records the version negotiated at initialize (mcp-go
// finds it by an interface of its own).
func (s *stdioSession) SetProtocolVersion(v string) { s.protocolVersion.Store(v) }

func (s *stdioSession) RequestElicitation(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	var res mcp.ElicitationResult
	if err := s.request(ctx, string(mcp.MethodElicitationCreate), req.Params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func (s *stdioSession) ListRoots(ctx context.Context, _ mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	var res mcp.ListRootsResult
	if err := s.request(ctx, string(mcp.MethodListRoots), nil, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// request sends the client a request and waits for its answer, or for ctx.
func (s *stdioSession) request(ctx context.Context, method string, params, result any) error {
	id := s.lastID.Add(1)
	answer := make(chan rpcReply, 1)
	s.mu.Lock()
	s.pending[id] = answer
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	msg := struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{mcp.JSONRPC_VERSION, id, method, params}
	if err := s.out.send(msg); err != nil {
		return fmt.Errorf("send %s to the client: %w", method, err)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case r := <-answer:
		if r.Error != nil {
			return fmt.Errorf("the client answered %s with error %d: %s", method, r.Error.Code, r.Error.Message)
		}
		if err := json.Unmarshal(r.Result, result); err != nil {
			return fmt.Errorf("the client's answer to %s: %w", method, err)
		}
		return nil
	}
}

// deliver hands a response to the request it answers; false when no
// request of cordon's waits for that id.
func (s *stdioSession) deliver(id json.RawMessage, message []byte) bool {
	n, err := strconv.ParseInt(strings.Trim(string(id), `"`), 10, 64)
	if err != nil {
		return false
	}
	s.mu.Lock()
	answer, ok := s.pending[n]
	delete(s.pending, n) // a second answer to the same id finds nothing
	s.mu.Unlock()
	if !ok {
		return false
	}
	var r rpcReply
	if err := json.Unmarshal(message, &r); err != nil {
		r = rpcReply{Error: &rpcErrorDetail{mcp.PARSE_ERROR, err.Error()}}
	}
	answer <- r // buffered, and only this call found it
	return true
}

// notify writes a notification now, once the client has initialized.
func (s *stdioSession) notify(method string, params map[string]any) {
	if !s.Initialized() {
		return
	}
	s.out.send(mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: method, Params: mcp.NotificationParams{AdditionalFields: params}}})
}

// forwardNotifications writes what mcp-go queues for the client
// (progress, log messages) until ctx ends.
func (s *stdioSession) forwardNotifications(ctx context.Context, logErr func(error)) {
	for {
		select {
		case n := <-s.notifications:
			if err := s.out.send(n); err != nil {
				logErr(err)
			}
		case <-ctx.Done():
			return
		}
	}
}
