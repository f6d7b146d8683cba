package main

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"

	"github.com/cordonhq/cordon/internal/config"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// sandboxFlags are the flags shared by every command that confines, and
// serve's posture flags. Every one of them outranks the config files; the
// ones that set a config key are parsed by its declaration
// (config.ParseFlags), the rest are the command's own.
type sandboxFlags struct {
	mode, workspace, stateDir, config string
	noSandbox                         bool
	// fs is the command's flag set: only the flags given on the command
	// line outrank the config.
	fs *pflag.FlagSet
}

// register adds the flags to cmd, with their values' completions.
func (f *sandboxFlags) register(cmd *cobra.Command, withRequirement bool) {
	fs := cmd.Flags()
	f.fs = fs
	fs.StringVar(&f.mode, "mode", "", "sandbox `MODE`: read-only, workspace-write or danger-full-access (default: the config's, else workspace-write)")
	fs.StringVar(&f.workspace, "workspace", "", "workspace root `DIR` (default: the current directory)")
	fs.String("network", "", "network for confined commands, `allow|deny|restricted` (default: the config's, else allow)")
	fs.String("backend", "", "force a backend `NAME`: auto, bwrap, landlock, seatbelt or windows-acl")
	fs.StringVar(&f.stateDir, "state-dir", "", "state directory `DIR` (default $XDG_STATE_HOME/cordon)")
	fs.StringVar(&f.config, "config", "", "read this TOML config `FILE` after the user's and the workspace's (trusted like the user's)")
	completeValues(cmd, "mode", modeNames)
	completeValues(cmd, "network", networkNames)
	completeValues(cmd, "backend", backendNames)
	completeDirs(cmd, "workspace", "state-dir")
	cmd.RegisterFlagCompletionFunc("config", completeTOML)
	if withRequirement {
		fs.Bool("sandbox", false, "run unconfined, with a warning, when no backend works")
		fs.BoolVar(&f.noSandbox, "no-sandbox", false, "never confine (the sandbox is bypassed)")
		fs.Bool("sandbox-required", false, "refuse to run when no backend works (the default)")
	}
}

// registerPosture adds serve's flags for the approval posture.
func (f *sandboxFlags) registerPosture(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.String("preset", "", "posture in one word, `NAME`: safe, review (default) or danger")
	fs.String("approval", "", "when to ask the human, `POLICY`: never, on-request, ask-dangerous or always")
	fs.Duration("approval-timeout", config.ApprovalTimeout.Default(), "deny an approval request nobody answers within this time")
	completeValues(cmd, "preset", presetNames)
	completeValues(cmd, "approval", approvalNames)
	cmd.RegisterFlagCompletionFunc("approval-timeout", noCompletion)
}

// given are the flags on the command line, by name ("--mode") with their
// argument.
func (f *sandboxFlags) given() map[string]string {
	given := map[string]string{}
	f.fs.Visit(func(fl *pflag.Flag) { given["--"+fl.Name] = fl.Value.String() })
	return given
}

// resolve validates the flags, reads the config files and builds the
// deployment. Every error names the flag or FILE:LINE: key, and the fix.
func (f *sandboxFlags) resolve() (deployment, error) {
	flags, err := f.flagValues()
	if err != nil {
		return deployment{}, err
	}
	src := config.Sources{Flags: flags}
	ws := f.workspace
	src.Workspace.Origin = config.FlagOrigin("--workspace")
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			return deployment{}, fmt.Errorf("cannot determine the current directory (%v): give --workspace", err)
		}
		ws = wd
		src.Workspace.Origin = config.Origin{Source: config.SourceCwd}
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
	src.Workspace.V = ws
	home, err := userHome()
	if err != nil {
		return deployment{}, err
	}
	src.Home = home
	src.StateDir = config.Value[string]{V: f.stateDir, Origin: config.FlagOrigin("--state-dir")}
	if f.stateDir == "" {
		src.StateDir = config.Value[string]{V: config.DefaultStateDir(home), Origin: config.Origin{Source: config.SourceDefault}}
	}
	if src.StateDir.V, err = filepath.Abs(src.StateDir.V); err != nil {
		return deployment{}, usagef("--state-dir: %v", err)
	}
	if f.config != "" {
		if src.Explicit, err = filepath.Abs(f.config); err != nil {
			return deployment{}, usagef("--config: %v", err)
		}
	}
	return deploy(src)
}

// flagValues checks what only the command line can get wrong, then parses
// the flags that set config keys; the config fills in the rest.
func (f *sandboxFlags) flagValues() (config.Flags, error) {
	if f.noSandbox && f.mode != "" {
		return config.Flags{}, usagef("--mode cannot be combined with --no-sandbox: without a sandbox no mode is enforced; drop one of them")
	}
	flags, err := config.ParseFlags(f.given())
	if err != nil {
		return config.Flags{}, &usageError{msg: err.Error()}
	}
	return flags, nil
}

// userHome is the home directory the read-deny list and the home rule
// protect. $HOME when it names a directory; else the account's home from
// the user database, so that a cordon started without HOME (env -i, a
// service unit) protects the real one rather than none: it used to fall
// back to "/", moving the read-deny list to /.ssh.
func userHome() (string, error) {
	isDir := func(p string) bool { fi, err := os.Stat(p); return err == nil && fi.IsDir() }
	env := os.Getenv("HOME")
	if env != "" && isDir(env) {
		return env, nil
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "" && isDir(u.HomeDir) {
		return u.HomeDir, nil
	}
	if env != "" {
		return env, nil // named, and nothing there to protect
	}
	return "", fmt.Errorf("cannot find your home directory: HOME is not set and the user database names none; set HOME")
}
