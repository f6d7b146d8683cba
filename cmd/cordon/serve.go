package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/mcpserver"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/rs/zerolog"
	"golang.org/x/term"
)

func runServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", stderr)
	var f sandboxFlags
	f.register(fs, true)
	httpAddr := fs.String("http", "", "serve Streamable HTTP at ADDR (e.g. 127.0.0.1:8765) instead of stdio")
	preset := fs.String("preset", "", "posture in one word: safe, review (default) or danger")
	approvalFlag := fs.String("approval", "", "when to ask the human: never, on-request, ask-dangerous or always")
	sessionID := fs.String("session", "", "resume (or name) a session; its mode comes back from its log")
	delegatedFrom := fs.String("delegated-from", "", "start a sub-agent's session that can never be wider than session ID's mode")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	approvalTimeout := fs.Duration("approval-timeout", 5*time.Minute, "deny an approval request nobody answers within this time")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		return report(stderr, "serve", usagef("unexpected argument %q", fs.Arg(0)))
	}
	if *approvalTimeout <= 0 {
		return report(stderr, "serve", usagef("--approval-timeout must be positive, e.g. 5m"))
	}
	level, err := zerolog.ParseLevel(*logLevel)
	if err != nil || *logLevel == "" {
		return report(stderr, "serve", usagef("--log-level %q: use debug, info, warn or error", *logLevel))
	}
	d, err := f.resolve()
	if err != nil {
		return report(stderr, "serve", err)
	}
	posture, err := derivePosture(*preset, f.mode, *approvalFlag)
	if err != nil {
		return report(stderr, "serve", err)
	}
	d.settings.Mode = posture.Mode
	logger := newLogger(stderr, level)
	for _, p := range sandbox.CleanOrphanTmp(d.settings.StateDir, sandbox.OrphanAge) {
		logger.Info().Str("path", p).Msg("removed an orphaned session tmp directory")
	}

	ex := d.executor(func(msg string) { logger.Warn().Msg(msg) })
	if d.requirement == sandbox.Off {
		logger.Warn().Msg("the sandbox is off (--no-sandbox): commands run unconfined")
	} else if st := ex.Status(); st.State != sandbox.StateActive {
		logger.Error().Str("reason", st.Reason).Msg("no sandbox backend works: confined calls will fail with SANDBOX_UNAVAILABLE")
	} else {
		logger.Info().Str("backend", st.Backend).Str("version", st.Version).Str("enforcement", string(st.Enforcement)).
			Dur("probe", st.Probe).Msg("sandbox active")
	}
	tb := tools.New(tools.Config{
		Settings: d.settings, Executor: ex, Gate: approval.Gate{Policy: posture.Approval},
		Preset: string(posture.Preset), Logger: logger,
	})
	srv, err := mcpserver.New(mcpserver.Config{Toolbox: tb, Version: version, Logger: logger, ApprovalTimeout: *approvalTimeout,
		SessionID: *sessionID, DelegatedFrom: *delegatedFrom})
	if err != nil {
		return report(stderr, "serve", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *httpAddr != "" {
		err = srv.ServeHTTP(ctx, mcpserver.HTTPConfig{Addr: *httpAddr, Token: os.Getenv("CORDON_HTTP_TOKEN"),
			StateDir: d.settings.StateDir})
	} else {
		logger.Info().Str("session", srv.ProcessSession().ID).Str("mode", string(posture.Mode)).Msg("serving MCP on stdio")
		err = srv.ServeStdio(ctx, stdin, stdout)
		srv.Close()
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "cordon serve: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func derivePosture(preset, mode, policy string) (approval.DerivedState, error) {
	var s approval.Settings
	if preset != "" {
		p, err := approval.ParsePreset(preset)
		if err != nil {
			return approval.DerivedState{}, usagef("--preset: %v", err)
		}
		s.Preset = p
	}
	if mode != "" {
		s.Mode = sandbox.Mode(mode) // validated by resolve
	}
	if policy != "" {
		p, err := approval.ParsePolicy(policy)
		if err != nil {
			return approval.DerivedState{}, usagef("--approval: %v", err)
		}
		s.Approval = p
	}
	return approval.Derive(s)
}

// newLogger logs to stderr: JSON, or readable text when stderr is a
// terminal. stdout belongs to the protocol.
func newLogger(w io.Writer, level zerolog.Level) zerolog.Logger {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		w = zerolog.ConsoleWriter{Out: f}
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}
