package tools

import (
	"net/netip"
	"slices"
	"sync/atomic"
	"time"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/internal/defaults"
	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/rs/zerolog"
)

// Defaults of the bash tool (SPEC §5, §8).
const (
	DefaultBashTimeout = defaults.BashTimeout
	MaxBashTimeout     = defaults.MaxBashTimeout
	DefaultMaxOutput   = defaults.MaxOutputChars
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
	// ProcessesMax and ProcessBufferChars bound a session's background
	// processes (SPEC §8 [processes]).
	ProcessesMax       int
	ProcessBufferChars int
	Logger             zerolog.Logger
	// EgressForbidden are addresses the egress proxy never connects to
	// (cordon's own HTTP endpoint); ConfigHint is the config file a
	// refusal tells the human to allow a host in.
	EgressForbidden []netip.AddrPort
	ConfigHint      string
	// Secrets are the [secrets] the human configured, values read at
	// start; each session gets its own sentinels and CA (secrets.go).
	Secrets []secrets.Secret
}

// Toolbox runs tool calls for any number of sessions. A session's mode
// comes from its own log (Session.Mode), read by the call that needs it.
type Toolbox struct {
	// state is swapped whole by Reload (SIGHUP); a call pins one at its
	// start and uses it to its end.
	state atomic.Pointer[toolboxState]
}

type toolboxState struct {
	cfg    Config
	policy *sandbox.PolicyService
	cache  policyCache
}

// New returns a toolbox for cfg.
func New(cfg Config) *Toolbox {
	tb := &Toolbox{}
	tb.Reload(cfg)
	return tb
}

// Reload replaces the configuration: calls that start afterwards use the
// new one, calls in flight finish with the old.
func (tb *Toolbox) Reload(cfg Config) {
	if cfg.BashTimeout <= 0 {
		cfg.BashTimeout = DefaultBashTimeout
	}
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = DefaultMaxOutput
	}
	if cfg.ProcessesMax <= 0 {
		cfg.ProcessesMax = DefaultProcessesMax
	}
	if cfg.ProcessBufferChars <= 0 {
		cfg.ProcessBufferChars = DefaultProcessBufferChars
	}
	cfg.Settings = withSecretFiles(cfg.Settings, cfg.Secrets)
	tb.state.Store(&toolboxState{cfg: cfg, policy: &sandbox.PolicyService{Settings: cfg.Settings}})
}

// Config returns the toolbox's configuration now.
func (tb *Toolbox) Config() Config { return tb.state.Load().cfg }

// pin gives a call the configuration it runs under, once.
func (tb *Toolbox) pin(c Call) Call {
	if c.st == nil {
		c.st = tb.state.Load()
		if c.Session != nil {
			// The call's one reading of the session's mode. A narrowing
			// of it ends the processes that run wider before anything
			// else of the call happens.
			now := readMode(c)
			c.read = &modeReading{mode: now.session}
			c.Session.endNarrowed(now)
		}
	}
	return c
}

// resolve is the one place a call's policy comes from, for the shell and
// the file tools alike. override is an approved escalation, or "".
func (tb *Toolbox) resolve(call Call, override sandbox.Mode) (sandbox.ExecutionPolicy, *ToolError) {
	return tb.resolveFor(call, override, true)
}

// resolveToRead is resolve for a call that only reads, which spares the
// stat of the session tmp while the cached policy is current: the tmp is
// among the paths that policy was derived from, and nothing of a read
// writes there. When the policy must be derived afresh and a command has
// removed the tmp, the derivation fails, and the tmp is made again as for
// any call.
func (tb *Toolbox) resolveToRead(call Call) (sandbox.ExecutionPolicy, *ToolError) {
	if pol, terr := tb.resolveFor(call, "", false); terr == nil {
		return pol, nil
	}
	return tb.resolveFor(call, "", true)
}

func (tb *Toolbox) resolveFor(call Call, override sandbox.Mode, ensureTmp bool) (sandbox.ExecutionPolicy, *ToolError) {
	s := call.Session
	// The call's one reading, never the log again: a narrowing that lands
	// during the call is for the narrowing check to apply.
	req := sandbox.Request{SessionID: s.ID, Workspace: s.Workspace, Override: override, SessionMode: call.sessionMode()}
	req.ClientRoots, _ = s.ClientRoots()
	if s.Tmp != nil {
		if ensureTmp {
			if recreated, err := s.Tmp.Ensure(); err != nil {
				return sandbox.ExecutionPolicy{}, errorf(CodeUnavailable, "session tmp: %v", err)
			} else if recreated {
				s.warnTmpOnce(call.conf().Logger)
			}
		}
		req.TmpDir = s.Tmp.Path
	}
	p, err := call.st.cache.resolve(call.st.policy, req)
	if err != nil {
		return p, errorf(CodeUnavailable, "resolving the sandbox policy: %v", err)
	}
	if hosts := s.AllowedHosts(); len(hosts) > 0 {
		p.AllowedDomains = slices.Concat(p.AllowedDomains, hosts) // a copy: the cached policy stays
	}
	return p, nil
}
