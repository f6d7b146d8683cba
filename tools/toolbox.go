package tools

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/rs/zerolog"
)

// Defaults of the bash tool (SPEC §5, §8).
const (
	DefaultBashTimeout = 120 * time.Second
	MaxBashTimeout     = 600 * time.Second
	DefaultMaxOutput   = 30000
)

// Config is a deployment's configuration of the tools.
type Config struct {
	// Settings are the deployment defaults behind the policy service.
	Settings sandbox.Settings
	// Executor decides between confined, unconfined and refused.
	Executor *sandbox.Executor
	// Gate is the approval policy and its dangerous-command rules.
	Gate approval.Gate
	// Preset is the preset name to report (safe, review, danger, custom).
	Preset string
	// EnvPassthrough names extra variables a confined command inherits.
	EnvPassthrough []string
	BashTimeout    time.Duration
	MaxOutput      int
	Logger         zerolog.Logger
}

// Toolbox runs tool calls for any number of sessions. It is the
// sandbox.ModeSource of its own policy service, so a session's mode comes
// from that session's log.
type Toolbox struct {
	// state is swapped whole by Reload (SIGHUP), so a call sees one
	// consistent configuration from start to end.
	state atomic.Pointer[toolboxState]

	mu       sync.Mutex
	sessions map[string]*Session
}

type toolboxState struct {
	cfg    Config
	policy *sandbox.PolicyService
	cache  policyCache
}

// New returns a toolbox for cfg.
func New(cfg Config) *Toolbox {
	tb := &Toolbox{sessions: map[string]*Session{}}
	tb.Reload(cfg)
	return tb
}

// Reload replaces the configuration: calls that start afterwards use the
// new one, calls in flight finish with the old. Sessions are kept.
func (tb *Toolbox) Reload(cfg Config) {
	if cfg.BashTimeout <= 0 {
		cfg.BashTimeout = DefaultBashTimeout
	}
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = DefaultMaxOutput
	}
	tb.state.Store(&toolboxState{cfg: cfg, policy: &sandbox.PolicyService{Settings: cfg.Settings, Sessions: tb}})
}

// Config returns the toolbox's configuration.
func (tb *Toolbox) Config() Config { return tb.conf() }

func (tb *Toolbox) conf() Config { return tb.state.Load().cfg }

// Register makes a session known, so that its mode resolves from its log.
func (tb *Toolbox) Register(s *Session) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.sessions[s.ID] = s
}

// Unregister forgets a session.
func (tb *Toolbox) Unregister(id string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	delete(tb.sessions, id)
}

// SessionMode implements sandbox.ModeSource.
func (tb *Toolbox) SessionMode(id string) (sandbox.Mode, bool) {
	tb.mu.Lock()
	s := tb.sessions[id]
	tb.mu.Unlock()
	if s == nil {
		return "", false
	}
	return s.Mode()
}

// Resolve is the one place a call's policy comes from, for the shell and
// the file tools alike. override is an approved escalation, or "".
func (tb *Toolbox) Resolve(s *Session, override sandbox.Mode) (sandbox.ExecutionPolicy, *ToolError) {
	req := sandbox.Request{SessionID: s.ID, Workspace: s.Workspace, Override: override}
	req.ClientRoots, _ = s.ClientRoots()
	if s.Tmp != nil {
		if recreated, err := s.Tmp.Ensure(); err != nil {
			return sandbox.ExecutionPolicy{}, errorf(sandbox.CodeUnavailable, "session tmp: %v", err)
		} else if recreated {
			s.warnTmpOnce(tb.conf().Logger)
		}
		req.TmpDir = s.Tmp.Path
	}
	st := tb.state.Load()
	p, err := st.cache.resolve(st.policy, req)
	if err != nil {
		return p, errorf(sandbox.CodeUnavailable, "resolving the sandbox policy: %v", err)
	}
	return p, nil
}

func (tb *Toolbox) logger() *zerolog.Logger {
	l := tb.conf().Logger
	return &l
}
