package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cordonhq/cordon/sessionlog"
	"github.com/cordonhq/cordon/tools"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rs/zerolog"
)

// Config configures a server.
type Config struct {
	Toolbox         *tools.Toolbox
	Version         string
	ApprovalTimeout time.Duration
	Logger          zerolog.Logger
	// SessionID resumes (or names) the stdio session; "" makes a new one.
	SessionID string
	// DelegatedFrom starts a sub-agent's session capped at its parent's mode.
	DelegatedFrom string
}

// Server is cordon's MCP server.
type Server struct {
	cfg    Config
	tb     *tools.Toolbox
	mcp    *server.MCPServer
	states *stateSigner
	log    zerolog.Logger

	// process is the stdio session.
	process *tools.Session
	// principals is the HTTP token file (nil on stdio).
	principals *principalFile
	overHTTP   atomic.Bool
	metrics    *metrics

	mu       sync.Mutex
	sessions map[string]*tools.Session // HTTP protocol sessions
	owners   map[string]string         // protocol session → principal
	// tokens are the sessions of 2026-07-28 HTTP clients, which have no
	// protocol session: theirs is that of their principal (token).
	tokens   map[string]*tokenSession
	lastSeen map[string]time.Time // principal → its last request
	closed   bool
}

var errShuttingDown = errors.New("the server is shutting down")

// New builds the server and its process session.
func New(cfg Config) (*Server, error) {
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = DefaultApprovalTimeout
	}
	s := &Server{cfg: cfg, tb: cfg.Toolbox, states: newStateSigner(), log: cfg.Logger, sessions: map[string]*tools.Session{},
		owners: map[string]string{}, tokens: map[string]*tokenSession{}, lastSeen: map[string]time.Time{}}
	s.metrics = newMetrics(s)
	hooks := &server.Hooks{}
	hooks.AddOnUnregisterSession(func(ctx context.Context, cs server.ClientSession) { s.endSession(cs.SessionID()) })
	s.mcp = server.NewMCPServer("cordon", cfg.Version,
		server.WithInstructions(instructions(cfg.Toolbox.Config().Settings)),
		server.WithToolCapabilities(false),
		server.WithLogging(), // notifications/message: warnings for the human (Call.Warn)
		server.WithRecovery(),
		server.WithHooks(hooks),
	)
	s.mcp.AddNotificationHandler(string(mcp.MethodNotificationRootsListChanged), s.rootsChanged)
	for _, t := range tools.Tools() {
		s.mcp.AddTool(mcpTool(t), s.handler(t.Name, func(ctx context.Context, call tools.Call, args map[string]any) (*tools.Result, *tools.ToolError) {
			return t.Run(ctx, s.tb, call, args)
		}))
	}
	proc, err := s.openProcessSession()
	if err != nil {
		return nil, err
	}
	s.process = proc
	return s, nil
}

// MCP returns the underlying mcp-go server.
func (s *Server) MCP() *server.MCPServer { return s.mcp }

// ProcessSession is the stdio session (and the HTTP token session).
func (s *Server) ProcessSession() *tools.Session { return s.process }

type runner func(ctx context.Context, call tools.Call, args map[string]any) (*tools.Result, *tools.ToolError)

// handler adapts a tool to mcp-go: session lookup, verification of a multi
// round-trip retry, the approver, and the result's shape.
func (s *Server) handler(name string, run runner) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		sess, err := s.sessionFor(ctx)
		if err != nil {
			return toResult((&tools.ToolError{Code: tools.CodeUnavailable, Message: err.Error()}).AsResult()), nil
		}
		defer s.hold(sess)()
		args := req.GetArguments()
		if args == nil {
			args = map[string]any{}
		}
		a := &asker{srv: s, modern: server.IsModernRequest(ctx)}
		if req.Params.RequestState != "" || len(req.Params.InputResponses) > 0 {
			ans, err := s.retryAnswer(sess.ID, name, req, args)
			if err != nil {
				s.log.Warn().Err(err).Str("tool", name).Msg("refused an approval answer")
				return toResult((&tools.ToolError{Code: tools.CodeEscalationDenied, Denied: true,
					Message: fmt.Sprintf("[sandbox: approval refused] %v; nothing ran. Call the tool again to ask the human anew.", err)}).AsResult()), nil
			}
			a.answer = ans
		}
		s.ensureClient(ctx, sess)
		s.ensureRoots(ctx, sess)
		call := tools.Call{Session: sess, Progress: s.progress(ctx, req), Warn: s.warn(ctx)}
		if clientCanElicit(ctx) {
			call.Asker = a
		}
		start := time.Now()
		res, terr := run(ctx, call, args)
		s.metrics.observe(name, time.Since(start), res, terr)
		if tools.IsPending(terr) && a.pending != nil {
			return s.inputRequired(sess.ID, name, args, *a.pending), nil
		}
		if terr != nil {
			res = terr.AsResult()
		}
		res = s.tb.Fit(call, res)
		s.giveInstructions(call, res)
		return toResult(res), nil
	}
}

// toResult is the MCP form of a tool's result. A nil Structured (read_file)
// leaves structuredContent out, which is what makes such a result text
// only for the clients that would show the model structuredContent.
func toResult(r *tools.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: r.IsError}
	if r.Text != "" || len(r.Images) == 0 {
		out.Content = append(out.Content, mcp.NewTextContent(r.Text))
	}
	for _, img := range r.Images {
		out.Content = append(out.Content, mcp.NewImageContent(encodeBase64(img.Data), img.MIMEType))
	}
	if r.Structured != nil {
		out.StructuredContent = r.Structured
	}
	return out
}

// progress returns a reporter when the client asked for progress.
func (s *Server) progress(ctx context.Context, req mcp.CallToolRequest) func(float64, string) {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil
	}
	token := req.Params.Meta.ProgressToken
	return func(progress float64, message string) {
		s.notify(ctx, string(mcp.MethodNotificationProgress), map[string]any{
			"progressToken": token, "progress": progress, "message": message})
	}
}

// warn returns a reporter of warnings for the human: MCP log messages
// (notifications/message, level warning) to the client of ctx's request,
// which shows or logs them as it does a server's log.
func (s *Server) warn(ctx context.Context) func(string) {
	return func(message string) {
		s.notify(ctx, string(mcp.MethodNotificationMessage), map[string]any{
			"level": mcp.LoggingLevelWarning, "logger": "cordon", "data": message})
	}
}

// notify sends the client of ctx's request a notification. On stdio it is
// written at once, by the request's own goroutine, so that it cannot
// arrive after the request's answer, as one queued for mcp-go's
// notification channel could.
func (s *Server) notify(ctx context.Context, method string, params map[string]any) {
	if ss, ok := server.ClientSessionFromContext(ctx).(*stdioSession); ok {
		ss.notify(method, params)
		return
	}
	s.mcp.SendNotificationToClient(ctx, method, params)
}

// sessionFor finds the tools session of a request: the process session on
// stdio, the principal's token session for 2026-07-28 HTTP clients, else
// one per protocol session.
func (s *Server) sessionFor(ctx context.Context) (*tools.Session, error) {
	cs := server.ClientSessionFromContext(ctx)
	if _, onStdio := cs.(*stdioSession); onStdio || !s.overHTTP.Load() {
		return s.process, nil
	}
	name := principalOf(ctx)
	if server.IsModernRequest(ctx) {
		return s.tokenSessionFor(name)
	}
	if cs == nil || cs.SessionID() == "" {
		return s.process, nil
	}
	id := cs.SessionID()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errShuttingDown
	}
	if sess := s.sessions[id]; sess != nil {
		return sess, nil
	}
	if owner, known := s.owners[id]; known && owner != name {
		return nil, fmt.Errorf("the session belongs to another principal")
	}
	sess, err := s.newSession(sessionlog.NewSessionID(), "http", true, name, s.principals.workspace(name))
	if err != nil {
		return nil, err
	}
	s.sessions[id] = sess
	return sess, nil
}

func (s *Server) endSession(protocolID string) {
	s.mu.Lock()
	sess := s.sessions[protocolID]
	delete(s.sessions, protocolID)
	delete(s.owners, protocolID)
	s.mu.Unlock()
	if sess != nil {
		s.closeSession(sess)
	}
}

// Close ends every session: logs closed, tmp directories removed.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	all := s.sessions
	s.sessions = map[string]*tools.Session{}
	for name, ts := range s.tokens {
		all["token:"+name] = ts.sess
	}
	s.tokens = map[string]*tokenSession{}
	s.mu.Unlock()
	for _, sess := range all {
		s.closeSession(sess)
	}
	if s.process != nil {
		s.closeSession(s.process)
	}
}
