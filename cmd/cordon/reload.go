package main

import (
	"context"
	"os"
	"strings"
	"sync"

	"github.com/cordonhq/cordon/internal/config"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/rs/zerolog"
)

// reloader re-reads the config files when `cordon serve` gets SIGHUP: the
// human's explicit request (the files are never watched). The flags still
// outrank the files. A file with a problem is logged and ignored: the
// server keeps the configuration it has.
//
// Applied from the next call on, through tools.Toolbox.Reload: mode,
// preset, approval, network, the path lists, env_passthrough,
// dangerous_commands and [bash] ([processes] is read and reported, but
// nothing uses it yet). A changed backend or sandbox requirement
// gets a new executor (probed again); over HTTP with a generated token,
// one that cannot hide the token file is refused, as at start-up. Kept as started, and logged as such:
// the keys declared fixedAtStart in internal/config (approval_timeout,
// [http]: the transport is set up at start) and the server's
// instructions, which name the mode the client saw at initialisation.
// Sessions keep their own mode changes (escalations, `cordon mode`): the
// config is only the default under them.
type reloader struct {
	// mu keeps a reload and the HTTP endpoint's binding (bound) apart.
	mu  sync.Mutex
	cur deployment
	ex  *sandbox.Executor
	tb  *tools.Toolbox
	log zerolog.Logger
	// generatedToken: the server answers HTTP with a token in a file,
	// which a new backend must be able to hide as the first one did.
	generatedToken bool
}

func (r *reloader) run(ctx context.Context, hup <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			r.ex.Close()
			return
		case <-hup:
			r.reload()
		}
	}
}

// bound records the address the HTTP endpoint listens on once it is
// bound: a port chosen then (--http 127.0.0.1:0) is known only now, and
// the egress proxy must never connect to it.
func (r *reloader) bound(addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if addr == r.cur.servedAt {
		return
	}
	r.cur.servedAt = addr
	r.tb.Reload(r.cur.toolsConfig(r.ex, r.log))
}

func (r *reloader) reload() {
	r.mu.Lock()
	defer r.mu.Unlock()
	src := r.cur.sources
	cfg, err := src.Load()
	if err != nil {
		r.log.Error().Str("error", err.Error()).Msg("SIGHUP: not reloaded, the config has a problem; keeping the previous configuration")
		return
	}
	for _, w := range cfg.Warnings {
		r.log.Warn().Msg(w.String())
	}
	var applied []string
	modeChanged := false
	for _, c := range config.Diff(r.cur.cfg, cfg) {
		if c.StartOnly != "" {
			r.log.Warn().Str("key", c.Key).Msg("SIGHUP: " + c.String() + " not applied: " + c.StartOnly + "; it applies from the next start")
			continue
		}
		applied = append(applied, c.String())
		modeChanged = modeChanged || c.Key == config.Mode.Name()
	}
	// What cannot change keeps its started value, so that the deployment
	// stays the truth about the running server and the next reload
	// compares against it.
	cfg.KeepStartOnly(r.cur.cfg)
	next := newDeployment(src, cfg)
	next.servedAt = r.cur.servedAt
	next.secrets = r.cur.secrets // read at start only
	if len(applied) == 0 {
		r.log.Info().Msg("SIGHUP: config re-read, nothing to apply")
		r.cur = next
		return
	}
	ex := r.ex
	if next.backend != r.cur.backend || next.requirement != r.cur.requirement {
		ex = next.executor(func(msg string) { r.log.Warn().Msg(msg) })
		ex.Warm = true
		logSandbox(r.log, next, ex)
		if why := tokenExposed(ex.Status()); r.generatedToken && why != "" {
			r.log.Error().Msg("SIGHUP: not reloaded: " + why + "; keeping the previous configuration")
			return
		}
	}
	r.tb.Reload(next.toolsConfig(ex, r.log))
	r.log.Info().Strs("changes", applied).Msg("SIGHUP: config reloaded: " + strings.Join(applied, "; "))
	if modeChanged {
		r.log.Info().Msg("SIGHUP: the new mode applies from the next call of every session without a mode of its own; " +
			"the server's instructions still name the mode it started with")
	}
	if ex != r.ex {
		r.ex.Close() // its warm sandboxes run the old backend
	}
	r.cur, r.ex = next, ex
}

// ready says whether the server may take calls: the probe is over and
// found a working sandbox (or the sandbox is off). /readyz asks it.
func (r *reloader) ready(probed <-chan struct{}) (bool, string) {
	select {
	case <-probed:
	default:
		return false, "the sandbox probe is still running"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur.requirement == sandbox.Off {
		return true, ""
	}
	if st := r.ex.Status(); st.State != sandbox.StateActive {
		return false, "no sandbox backend works: " + st.Reason
	}
	return true, ""
}
