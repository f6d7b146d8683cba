package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/sandbox"
)

// usageError is a bad command line: exit 2, nothing run.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// sandboxFlags are the flags shared by every command that confines, and
// serve's posture flags. Every one of them outranks the config files.
type sandboxFlags struct {
	mode, workspace, network, backend, stateDir, config string
	sandbox, noSandbox, sandboxRequired                 bool
	// serve only (registerPosture)
	preset, approval string
	approvalTimeout  time.Duration
	// given names the flags that were on the command line.
	given map[string]bool
}

func (f *sandboxFlags) register(fs *flag.FlagSet, withRequirement bool) {
	fs.StringVar(&f.mode, "mode", "", "sandbox mode: read-only, workspace-write or danger-full-access (default: the config's, else workspace-write)")
	fs.StringVar(&f.workspace, "workspace", "", "workspace root (default: the current directory)")
	fs.StringVar(&f.network, "network", "", "network for confined commands: allow or deny (default: the config's, else allow)")
	fs.StringVar(&f.backend, "backend", "", "force a backend: auto, bwrap, landlock or seatbelt")
	fs.StringVar(&f.stateDir, "state-dir", "", "state directory (default $XDG_STATE_HOME/cordon)")
	fs.StringVar(&f.config, "config", "", "read this TOML config file after the user's and the workspace's (trusted like the user's)")
	if withRequirement {
		fs.BoolVar(&f.sandbox, "sandbox", false, "run unconfined, with a warning, when no backend works")
		fs.BoolVar(&f.noSandbox, "no-sandbox", false, "never confine (the sandbox is bypassed)")
		fs.BoolVar(&f.sandboxRequired, "sandbox-required", false, "refuse to run when no backend works (the default)")
	}
}

// registerPosture adds serve's flags for the approval posture.
func (f *sandboxFlags) registerPosture(fs *flag.FlagSet) {
	fs.StringVar(&f.preset, "preset", "", "posture in one word: safe, review (default) or danger")
	fs.StringVar(&f.approval, "approval", "", "when to ask the human: never, on-request, ask-dangerous or always")
	fs.DurationVar(&f.approvalTimeout, "approval-timeout", defaultApprovalTimeout, "deny an approval request nobody answers within this time")
}

// parse parses args and remembers which flags were given, so that only
// those outrank the config.
func (f *sandboxFlags) parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	f.given = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.given[fl.Name] = true })
	return nil
}

// deployment is what the config files and the flags resolve to.
type deployment struct {
	settings    sandbox.Settings
	requirement sandbox.Requirement
	backend     string
	posture     approval.DerivedState
	gate        approval.Gate
	// passthrough is env_passthrough: variables a confined command
	// inherits beyond the allowlist.
	passthrough     []string
	approvalTimeout time.Duration
	bashTimeout     time.Duration
	maxOutput       int
	httpAddr        string
	allowedOrigins  []string

	cfg     *config
	sources configSources
}

// resolve validates the flags, reads the config files and builds the
// deployment. Every error names the flag or FILE:LINE: key, and the fix.
func (f *sandboxFlags) resolve() (deployment, error) {
	fv, err := f.flagValues()
	if err != nil {
		return deployment{}, err
	}
	src := configSources{flags: fv}
	ws := f.workspace
	src.workspace.Origin = flagOrigin("--workspace")
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			return deployment{}, fmt.Errorf("cannot determine the current directory (%v): give --workspace", err)
		}
		ws = wd
		src.workspace.Origin = origin{Source: sourceCwd}
	}
	fi, err := os.Stat(ws)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return deployment{}, usagef("--workspace %s: no such directory; create it or point --workspace at an existing one", ws)
	case err != nil:
		return deployment{}, usagef("--workspace %s: %v", ws, err)
	case !fi.IsDir():
		return deployment{}, usagef("--workspace %s: not a directory; point it at the project directory", ws)
	}
	if ws, err = filepath.Abs(ws); err != nil {
		return deployment{}, usagef("--workspace: %v", err)
	}
	src.workspace.V = ws
	home, err := os.UserHomeDir()
	if err != nil {
		home = "/"
	}
	src.home = home
	src.stateDir = value[string]{f.stateDir, flagOrigin("--state-dir")}
	if f.stateDir == "" {
		src.stateDir = value[string]{sandbox.DefaultStateDir(home), defaultOrigin}
	}
	if src.stateDir.V, err = filepath.Abs(src.stateDir.V); err != nil {
		return deployment{}, usagef("--state-dir: %v", err)
	}
	if f.config != "" {
		if src.explicit, err = filepath.Abs(f.config); err != nil {
			return deployment{}, usagef("--config: %v", err)
		}
	}
	return src.deploy()
}

// deploy loads the configuration and turns it into a deployment. SIGHUP
// calls it again with the same sources.
func (src configSources) deploy() (deployment, error) {
	cfg, err := src.load()
	if err != nil {
		var ce *configError
		if errors.As(err, &ce) {
			return deployment{}, &usageError{msg: err.Error()}
		}
		return deployment{}, err
	}
	d := deployment{cfg: cfg, sources: src}
	home := src.home
	d.settings = sandbox.Settings{
		Mode:            cfg.Derived.Mode,
		Network:         cfg.Network.V,
		Workspace:       src.workspace.V,
		FallbackRoot:    expandPath(cfg.FallbackRoot.V, home),
		ExtraWriteAllow: expandPaths(cfg.ExtraWriteAllow.values(), home),
		ExtraReadDeny:   expandPaths(cfg.ExtraReadDeny.values(), home),
		ProtectedNames:  cfg.ProtectedPaths.values(),
		Home:            home,
		StateDir:        src.stateDir.V,
		ConfigDir:       sandbox.DefaultConfigDir(home),
	}
	d.requirement = cfg.Sandbox.V
	d.backend = cfg.Backend.V
	d.posture = cfg.Derived
	d.gate = approval.Gate{Policy: cfg.Derived.Approval, Rules: cfg.Rules}
	d.passthrough = cfg.EnvPassthrough.values()
	d.approvalTimeout = cfg.ApprovalTimeout.V
	d.bashTimeout = cfg.BashTimeout.V
	d.maxOutput = cfg.MaxOutputChars.V
	d.httpAddr = cfg.HTTPAddr.V
	d.allowedOrigins = cfg.AllowedOrigins.values()
	return d, nil
}

// flagValues validates the flags that were given; the config fills in the
// rest.
func (f *sandboxFlags) flagValues() (flagValues, error) {
	var fv flagValues
	count := 0
	for _, b := range []bool{f.sandbox, f.noSandbox, f.sandboxRequired} {
		if b {
			count++
		}
	}
	if count > 1 {
		return fv, usagef("--sandbox, --no-sandbox and --sandbox-required are mutually exclusive: give one")
	}
	switch {
	case f.sandbox:
		fv.requirement, fv.requirementFlag = sandbox.Auto, "--sandbox"
	case f.noSandbox:
		fv.requirement, fv.requirementFlag = sandbox.Off, "--no-sandbox"
		if f.mode != "" {
			return fv, usagef("--mode cannot be combined with --no-sandbox: without a sandbox no mode is enforced; drop one of them")
		}
	case f.sandboxRequired:
		fv.requirement, fv.requirementFlag = sandbox.Required, "--sandbox-required"
	}
	if f.mode != "" {
		m, err := sandbox.ParseMode(f.mode)
		if err != nil {
			return fv, usagef("--mode: %v", err)
		}
		fv.mode = string(m)
	}
	if f.network != "" {
		n, err := sandbox.ParseNetwork(f.network)
		if err != nil {
			return fv, usagef("--network: %v", err)
		}
		fv.network = string(n)
	}
	if f.backend != "" {
		if err := sandbox.ValidBackend(f.backend); err != nil {
			return fv, usagef("--backend: %v", err)
		}
		fv.backend = f.backend
	}
	if f.preset != "" {
		p, err := approval.ParsePreset(f.preset)
		if err != nil {
			return fv, usagef("--preset: %v", err)
		}
		fv.preset = string(p)
	}
	if f.approval != "" {
		p, err := approval.ParsePolicy(f.approval)
		if err != nil {
			return fv, usagef("--approval: %v", err)
		}
		fv.approval = string(p)
	}
	if f.given["approval-timeout"] {
		if f.approvalTimeout <= 0 {
			return fv, usagef("--approval-timeout must be positive, e.g. 5m")
		}
		fv.approvalTimeout = f.approvalTimeout
	}
	return fv, nil
}

func (d deployment) executor(warn func(string)) *sandbox.Executor {
	return &sandbox.Executor{
		Provider:    &sandbox.LocalProvider{Forced: d.backend},
		Requirement: d.requirement,
		Warn:        warn,
	}
}

// warnings prints the workspace widenings that were dropped.
func (d deployment) warnings(warn func(string)) {
	for _, w := range d.cfg.Warnings {
		warn(w.String())
	}
}

// newFlagSet returns a flag set whose errors are usage errors.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("cordon "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// report prints err and maps it to an exit code.
func report(stderr io.Writer, cmd string, err error) int {
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "cordon %s: %v\n", cmd, err)
		return exitUsage
	}
	fmt.Fprintf(stderr, "cordon %s: %v\n", cmd, err)
	return exitFailure
}
