package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cordonhq/cordon/sandbox"
)

// usageError is a bad command line: exit 2, nothing run.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// sandboxFlags are the flags shared by every command that confines.
type sandboxFlags struct {
	mode, workspace, network, backend, stateDir string
	sandbox, noSandbox, sandboxRequired         bool
}

func (f *sandboxFlags) register(fs *flag.FlagSet, withRequirement bool) {
	fs.StringVar(&f.mode, "mode", "", "sandbox mode: read-only, workspace-write or danger-full-access (default workspace-write)")
	fs.StringVar(&f.workspace, "workspace", "", "workspace root (default: the current directory)")
	fs.StringVar(&f.network, "network", "", "network for confined commands: allow or deny (default allow)")
	fs.StringVar(&f.backend, "backend", "", "force a backend: auto, bwrap, landlock or seatbelt")
	fs.StringVar(&f.stateDir, "state-dir", "", "state directory (default $XDG_STATE_HOME/cordon)")
	if withRequirement {
		fs.BoolVar(&f.sandbox, "sandbox", false, "run unconfined, with a warning, when no backend works")
		fs.BoolVar(&f.noSandbox, "no-sandbox", false, "never confine (the sandbox is bypassed)")
		fs.BoolVar(&f.sandboxRequired, "sandbox-required", false, "refuse to run when no backend works (the default)")
	}
}

// deployment is what the flags resolve to.
type deployment struct {
	settings    sandbox.Settings
	requirement sandbox.Requirement
	backend     string
}

// resolve validates the flags and builds the deployment's settings. Every
// error names the flag and the fix.
func (f *sandboxFlags) resolve() (deployment, error) {
	var d deployment
	set := &d.settings
	set.Mode = sandbox.WorkspaceWrite
	set.Network = sandbox.NetworkAllow
	d.requirement = sandbox.Required
	d.backend = "auto"

	count := 0
	for _, b := range []bool{f.sandbox, f.noSandbox, f.sandboxRequired} {
		if b {
			count++
		}
	}
	if count > 1 {
		return d, usagef("--sandbox, --no-sandbox and --sandbox-required are mutually exclusive: give one")
	}
	switch {
	case f.sandbox:
		d.requirement = sandbox.Auto
	case f.noSandbox:
		d.requirement = sandbox.Off
		if f.mode != "" {
			return d, usagef("--mode cannot be combined with --no-sandbox: without a sandbox no mode is enforced; drop one of them")
		}
	}
	if f.mode != "" {
		m, err := sandbox.ParseMode(f.mode)
		if err != nil {
			return d, usagef("--mode: %v", err)
		}
		set.Mode = m
	}
	if f.network != "" {
		n, err := sandbox.ParseNetwork(f.network)
		if err != nil {
			return d, usagef("--network: %v", err)
		}
		set.Network = n
	}
	if f.backend != "" {
		if err := sandbox.ValidBackend(f.backend); err != nil {
			return d, usagef("--backend: %v", err)
		}
		d.backend = f.backend
	}
	ws := f.workspace
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			return d, fmt.Errorf("cannot determine the current directory (%v): give --workspace", err)
		}
		ws = wd
	}
	fi, err := os.Stat(ws)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return d, usagef("--workspace %s: no such directory; create it or point --workspace at an existing one", ws)
	case err != nil:
		return d, usagef("--workspace %s: %v", ws, err)
	case !fi.IsDir():
		return d, usagef("--workspace %s: not a directory; point it at the project directory", ws)
	}
	set.Workspace = ws
	home, err := os.UserHomeDir()
	if err != nil {
		home = "/"
	}
	set.Home = home
	set.StateDir = f.stateDir
	if set.StateDir == "" {
		set.StateDir = sandbox.DefaultStateDir(home)
	}
	if set.StateDir, err = filepath.Abs(set.StateDir); err != nil {
		return d, usagef("--state-dir: %v", err)
	}
	set.ConfigDir = sandbox.DefaultConfigDir(home)
	return d, nil
}

func (d deployment) executor(warn func(string)) *sandbox.Executor {
	return &sandbox.Executor{
		Provider:    &sandbox.LocalProvider{Forced: d.backend},
		Requirement: d.requirement,
		Warn:        warn,
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
