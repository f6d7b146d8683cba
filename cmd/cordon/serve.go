package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cordonhq/cordon/internal/config"
	"github.com/cordonhq/cordon/mcpserver"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// serveFlags are serve's own flags, beside the sandbox's.
type serveFlags struct {
	sandboxFlags
	http, session, delegatedFrom, logLevel string
	metrics, replica                       string
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "run the MCP server, on stdio or Streamable HTTP",
		Long: `Serve MCP on stdin and stdout (nothing else goes to stdout; logs go to
stderr), or with --http ADDR Streamable HTTP at /mcp, which needs a bearer
token on every request: CORDON_HTTP_TOKEN, else one generated into
<state-dir>/http-token.`,
		Example: `  claude mcp add cordon -- cordon serve --workspace "$PWD"
  cordon serve --http 127.0.0.1:8765 --mode read-only`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(&f, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.register(cmd, true)
	f.registerPosture(cmd)
	fs := cmd.Flags()
	fs.StringVar(&f.http, "http", "", `serve Streamable HTTP at `+"`ADDR`"+` (e.g. 127.0.0.1:8765) instead of stdio; "config" takes ADDR from [http] addr`)
	fs.StringVar(&f.session, "session", "", "resume (or name) a session `ID`; its mode comes back from its log")
	fs.StringVar(&f.delegatedFrom, "delegated-from", "", "serve a sub-agent: every session (stdio or HTTP) is never wider than session `ID`'s mode, read at every call")
	fs.StringVar(&f.logLevel, "log-level", "info", "log `LEVEL`: debug, info, warn or error")
	fs.StringVar(&f.replica, "replica", "", "prefix every HTTP session id with `NAME`. (default $CORDON_REPLICA), for a gateway that routes by it")
	fs.StringVar(&f.metrics, "metrics", "", "serve Prometheus metrics at /metrics on `ADDR` (e.g. 127.0.0.1:9464), a listener of its own")
	completeValues(cmd, "log-level", logLevels)
	completeValues(cmd, "http", []string{httpFromConfig, "127.0.0.1:8765"})
	stateDir := func() string { return resolveStateDir(f.stateDir) }
	cmd.RegisterFlagCompletionFunc("session", completeSessions(stateDir))
	cmd.RegisterFlagCompletionFunc("delegated-from", completeSessions(stateDir))
	return cmd
}

func runServe(f *serveFlags, stdin io.Reader, stdout, stderr io.Writer) error {
	level, err := zerolog.ParseLevel(f.logLevel)
	if err != nil || f.logLevel == "" {
		return usagef("--log-level %q: use debug, info, warn or error", f.logLevel)
	}
	// SIGHUP asks for a reload; it must never kill the server, so it is
	// caught before the config is even read.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	d, err := f.resolve()
	if err == nil {
		// Read once: a from_command runs here, never per call.
		if d.secrets, err = config.ResolveSecrets(d.cfg.Secrets, d.sources.Home); err != nil {
			err = &usageError{msg: "secrets: " + err.Error()}
		}
	}
	if err != nil {
		if f.http == "" {
			return serveUnavailable(err, level, stdin, stdout, stderr)
		}
		return err
	}
	addr := f.http
	if addr == httpFromConfig {
		if d.httpAddr == "" {
			return usagef("--http config: no config file sets [http] addr; add it, or give --http ADDR")
		}
		addr = d.httpAddr
	}
	d.servedAt = addr
	logger := newLogger(stderr, level)
	for _, file := range d.cfg.Files {
		logger.Info().Str("file", file.Path).Str("layer", string(file.Layer)).Msg("read config")
	}
	d.warnings(func(msg string) { logger.Warn().Msg(msg) })
	pathWarnings := sandbox.PathWarnings(os.Getenv("PATH"))
	for i, dir := range sandbox.RelativePathEntries(os.Getenv("PATH")) {
		logger.Warn().Str("path_entry", dir).Msg(pathWarnings[i])
	}
	go logHomeRefusal(logger, d)
	// The probe is most of the start-up, and neither what follows nor
	// initialize needs it: it runs beside them, and the first call that
	// needs the sandbox waits for its verdict. (It confines nothing of
	// the user's: it runs in a scratch directory of its own.)
	ex := d.executor(func(msg string) { logger.Warn().Msg(msg) })
	ex.Warm = true // a server's calls share warm sandboxes (the reloader ends them)
	probed := make(chan struct{})
	go func() { logSandbox(logger, d, ex); close(probed) }()
	// A server that ends at once (its client gone) still lets the probe
	// finish, so that the probe removes its scratch directory.
	defer func() {
		select {
		case <-probed:
		case <-time.After(probeGrace):
		}
	}()
	for _, p := range sandbox.CleanOrphanTmp(d.settings.StateDir, sandbox.OrphanAge) {
		logger.Info().Str("path", p).Msg("removed an orphaned session tmp directory")
	}
	// A cordon killed mid-call could not undo what its command wrote in
	// protected paths: this start does.
	recovered, err := sandbox.RecoverGuards(d.settings.StateDir)
	for _, c := range recovered {
		logger.Warn().Str("path", c.Path).Str("what", c.What).Msg("restored a protected path that a command of an earlier cordon changed")
	}
	if err != nil {
		logger.Warn().Err(err).Msg("restoring protected paths left by an earlier cordon")
	}

	if len(d.secrets) > 0 {
		if err := hideSecrets(); err != nil {
			return fmt.Errorf("secrets are configured, but cordon could not hide its memory from the commands it runs: %w", err)
		}
	}
	tb := tools.New(d.toolsConfig(ex, logger))
	srv, err := mcpserver.New(mcpserver.Config{Toolbox: tb, Version: version, Logger: logger, ApprovalTimeout: d.approvalTimeout,
		SessionID: f.session, DelegatedFrom: f.delegatedFrom})
	if err != nil {
		return err
	}
	// Over HTTP, SIGTERM drains (a rollout's stop); SIGINT, the human's
	// Ctrl-C, ends at once.
	stopSignals := []os.Signal{syscall.SIGINT, syscall.SIGTERM}
	drain := make(chan struct{})
	if addr != "" {
		stopSignals = stopSignals[:1]
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		defer signal.Stop(term)
		go func() { <-term; close(drain) }()
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	generatedToken := addr != "" && os.Getenv("CORDON_HTTP_TOKEN") == ""
	rl := &reloader{cur: d, ex: ex, tb: tb, log: logger, generatedToken: generatedToken}
	if generatedToken {
		<-probed // the check below needs the probe's verdict
		if why := tokenExposed(ex.Status()); why != "" {
			srv.Close()
			return errors.New(why)
		}
	}
	go rl.run(ctx, hup)
	if f.metrics != "" {
		go func() {
			if err := srv.ServeMetrics(ctx, f.metrics, nil); err != nil {
				logger.Error().Err(err).Msg("the metrics listener failed")
			}
		}()
	}
	if addr != "" {
		err = srv.ServeHTTP(ctx, mcpserver.HTTPConfig{Addr: addr, Token: os.Getenv("CORDON_HTTP_TOKEN"),
			AllowedOrigins: d.allowedOrigins, StateDir: d.settings.StateDir,
			TokensFile: expandTilde(d.httpTokens), IdleTimeout: d.idleTimeout,
			Replica: firstSet(f.replica, os.Getenv("CORDON_REPLICA")),
			Drain:   drain, DrainTimeout: d.drainTimeout, Probed: func() (bool, string) { return rl.ready(probed) },
			Ready: func(bound, _ string) { rl.bound(bound) }})
	} else {
		logger.Info().Str("session", srv.ProcessSession().ID).Str("mode", string(d.posture.Mode)).Msg("serving MCP on stdio")
		err = srv.ServeStdio(ctx, stdin, stdout)
		srv.Close()
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// serveUnavailable serves stdio for a cordon whose configuration is
// broken or refused: a client started it, and a server that exited would
// show the human only "connection closed". The handshake is answered, and
// the reason reaches the human through every tool call and the
// instructions; nothing runs. It also goes to stderr, at once, and the
// exit code is the one the error would have had.
func serveUnavailable(cause error, level zerolog.Level, stdin io.Reader, stdout, stderr io.Writer) error {
	fmt.Fprintf(stderr, "cordon serve: %v\n", cause)
	logger := newLogger(stderr, level)
	logger.Error().Msg("serving MCP on stdio with every tool call refused until the configuration is fixed")
	srv := mcpserver.NewUnavailable(version, cause.Error(), logger)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv.ServeStdio(ctx, stdin, stdout)
	var ue *usageError
	if errors.As(cause, &ue) {
		return exitCode(exitUsage)
	}
	return exitCode(exitFailure)
}

// tokenExposed says why a backend would let confined commands read a
// generated HTTP token, or "". The token lives in a file under the state
// directory; a backend that cannot hide the read-deny list (Landlock)
// would let a command read it, open its own session and approve its own
// escalation. (CORDON_HTTP_TOKEN never reaches a command: the environment
// is not passed on.)
func tokenExposed(st sandbox.Status) string {
	if st.State != sandbox.StateActive || st.Enforcement == sandbox.EnforcementFull {
		return ""
	}
	return fmt.Sprintf("the %s backend cannot hide the HTTP token file from confined commands "+
		"(its enforcement is %s): set CORDON_HTTP_TOKEN to a secret of your own (it never reaches a command), or install bubblewrap", st.Backend, st.Enforcement)
}

// probeGrace bounds how long a server that is ending waits for its probe.
const probeGrace = 5 * time.Second

// httpFromConfig is the --http value that takes the address from the
// config's [http] addr. Without --http, serve speaks stdio whatever the
// config says: an MCP client that spawns cordon expects stdio.
const httpFromConfig = "config"

// toolsConfig is the tools' part of the deployment.
func (d deployment) toolsConfig(ex *sandbox.Executor, logger zerolog.Logger) tools.Config {
	return tools.Config{
		Settings: d.settings, Executor: ex, Gate: d.gate, Preset: string(d.posture.Preset),
		EnvPassthrough: d.passthrough, BashTimeout: d.bashTimeout, MaxOutput: d.maxOutput,
		ProcessesMax: d.processesMax, ProcessBufferChars: d.processBuffer, Logger: logger,
		EgressForbidden: servedAddrs(d.servedAt), ConfigHint: d.sources.UserFile(),
		Secrets: d.secrets,
	}
}

// servedAddrs are the addresses cordon's HTTP endpoint answers on, which
// a confined command must never reach through the egress proxy: its token
// would let the command approve its own escalations. The proxy refuses
// every local address on their port (all of loopback, 0.0.0.0, each
// interface's, looked up as it connects), whatever allowed_domains says,
// so a wildcard listener or a name needs no list of its own: one entry
// carries the port.
func servedAddrs(addr string) []netip.AddrPort {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil
	}
	ip := netip.IPv4Unspecified() // a wildcard, or a name: some local address
	if a, err := netip.ParseAddr(host); err == nil {
		ip = a.Unmap()
	}
	return []netip.AddrPort{netip.AddrPortFrom(ip, uint16(port))}
}

// logHomeRefusal says at start-up, rather than at the first call, when the
// workspace-write policy of the deployment is one that no backend may
// confine (a writable root holds the home directory). It resolves the
// policy beside the start, as the probe runs.
func logHomeRefusal(logger zerolog.Logger, d deployment) {
	if d.requirement == sandbox.Off || d.settings.Mode == sandbox.DangerFullAccess {
		return
	}
	svc := sandbox.PolicyService{Settings: d.settings}
	pol, err := svc.Resolve(sandbox.Request{Override: sandbox.WorkspaceWrite})
	if err != nil || pol.Refusal() == nil {
		return
	}
	ev := logger.Warn()
	if d.settings.Mode == sandbox.WorkspaceWrite {
		ev = logger.Error()
	}
	ev.Str("code", sandbox.CodeUnavailable).Msg("workspace-write commands and file writes will be refused: " + trimUnavailable(pol.Refusal()))
}

// logSandbox says whether the sandbox works, and how.
func logSandbox(logger zerolog.Logger, d deployment, ex *sandbox.Executor) {
	if d.requirement == sandbox.Off {
		logger.Warn().Str("origin", config.Sandbox.Of(d.cfg).Origin.String()).Msg("the sandbox is off: commands run unconfined")
	} else if st := ex.Status(); st.State != sandbox.StateActive {
		logger.Error().Str("reason", st.Reason).Msg("no sandbox backend works: confined calls will fail with SANDBOX_UNAVAILABLE")
	} else {
		logger.Info().Str("backend", st.Backend).Str("version", st.Version).Str("enforcement", string(st.Enforcement)).
			Dur("probe", st.Probe).Msg("sandbox active")
	}
}

// newLogger logs to stderr: JSON, or readable text when stderr is a
// terminal. stdout belongs to the protocol.
func newLogger(w io.Writer, level zerolog.Level) zerolog.Logger {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		w = zerolog.ConsoleWriter{Out: f}
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}

// expandTilde expands a leading ~/ to the home directory.
func expandTilde(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

func firstSet(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
