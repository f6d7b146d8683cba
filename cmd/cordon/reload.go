package main

import (
	"context"
	"os"
	"strings"

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
// dangerous_commands and [bash]. A changed backend or sandbox requirement
// gets a new executor (probed again). Kept as started, and logged as such:
// approval_timeout, [http] (the transport is set up at start) and the server's
// instructions, which name the mode the client saw at initialisation.
// Sessions keep their own mode changes (escalations, `cordon mode`): the
// config is only the default under them.
type reloader struct {
	cur deployment
	ex  *sandbox.Executor
	tb  *tools.Toolbox
	log zerolog.Logger
}

func (r *reloader) run(ctx context.Context, hup <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			r.reload()
		}
	}
}

// startOnly are the keys that a reload cannot change in a running server.
var startOnly = map[string]string{
	"approval_timeout":     "the server's approval timeout is fixed at start",
	"http.addr":            "the transport is chosen at start",
	"http.allowed_origins": "the HTTP guard is built at start",
}

func (r *reloader) reload() {
	next, err := r.cur.sources.deploy()
	if err != nil {
		r.log.Error().Str("error", err.Error()).Msg("SIGHUP: not reloaded, the config has a problem; keeping the previous configuration")
		return
	}
	for _, w := range next.cfg.Warnings {
		r.log.Warn().Msg(w.String())
	}
	var applied []string
	for _, c := range changes(r.cur.cfg, next.cfg) {
		key, _, _ := strings.Cut(c, ": ")
		if why, ok := startOnly[key]; ok {
			r.log.Warn().Str("key", key).Msg("SIGHUP: " + c + " not applied: " + why + "; it applies from the next start")
			continue
		}
		applied = append(applied, c)
	}
	// What cannot change keeps its started value, so that the deployment
	// stays the truth about the running server and the next reload
	// compares against it.
	next.approvalTimeout, next.httpAddr, next.allowedOrigins = r.cur.approvalTimeout, r.cur.httpAddr, r.cur.allowedOrigins
	next.cfg.ApprovalTimeout, next.cfg.HTTPAddr, next.cfg.AllowedOrigins = r.cur.cfg.ApprovalTimeout, r.cur.cfg.HTTPAddr, r.cur.cfg.AllowedOrigins
	if len(applied) == 0 {
		r.log.Info().Msg("SIGHUP: config re-read, nothing to apply")
		r.cur = next
		return
	}
	ex := r.ex
	if next.backend != r.cur.backend || next.requirement != r.cur.requirement {
		ex = next.executor(func(msg string) { r.log.Warn().Msg(msg) })
		logSandbox(r.log, next, ex)
	}
	r.tb.Reload(next.toolsConfig(ex, r.log))
	r.log.Info().Strs("changes", applied).Msg("SIGHUP: config reloaded: " + strings.Join(applied, "; "))
	if changed(applied, "mode") {
		r.log.Info().Msg("SIGHUP: the new mode applies from the next call of every session without a mode of its own; " +
			"the server's instructions still name the mode it started with")
	}
	r.cur, r.ex = next, ex
}
