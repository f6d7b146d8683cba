package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/spf13/cobra"
)

// Spawn classes: what a program `cordon wrap` runs may write besides the
// class directory.
const (
	classMCPServer     = "mcp_server"
	classExternalAgent = "external_agent"
)

var classNames = []string{classMCPServer, classExternalAgent}

// wrapFlags are wrap's own flags, beside the shared sandbox flags.
type wrapFlags struct {
	name, class     string
	allow, writable []string
}

func newWrapCmd() *cobra.Command {
	var f sandboxFlags
	var w wrapFlags
	cmd := &cobra.Command{
		Use:   "wrap [flags] -- CMD [ARGS...]",
		Short: "run another MCP server or agent CLI confined by its spawn class",
		Long: `Run another program — a third-party stdio MCP server, or an agent CLI —
confined by its spawn class, relaying stdin, stdout and stderr byte for byte,
forwarding signals, and exiting with its exit code (125 when the sandbox
cannot be set up). Name it in your MCP client's config instead of the server.

The mcp_server class writes only beneath <state-dir>/wrap/NAME (where its
caches and data go: XDG_CACHE_HOME, XDG_DATA_HOME, XDG_STATE_HOME,
npm_config_cache, UV_CACHE_DIR, PIP_CACHE_DIR), the workspace with
--mode workspace-write, and each --writable DIR. external_agent runs the
agent with a config home of its own beneath the class directory
(CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME), seeded at each start
from yours minus hooks, MCP servers, plugins and whatever else names a
program, with your credentials copied in; your ~/.claude, ~/.claude.json,
~/.codex and ~/.gemini stay read-only to it. Both keep the read-deny list, cordon's own
config and state, and every protected path. The environment passes through,
except CORDON_*. The network is the class's ([profiles.mcp_server] network in
the config, else allow) unless --network says otherwise.`,
		Example: `  cordon wrap -- npx -y @modelcontextprotocol/server-github
  cordon wrap --network restricted --allow-domain api.github.com -- npx -y @modelcontextprotocol/server-github
  cordon wrap --class external_agent --mode workspace-write -- codex`,
		Args: commandLine,
		RunE: func(cmd *cobra.Command, argv []string) error {
			return runWrap(&f, &w, argv, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.register(cmd, true)
	w.register(cmd, classMCPServer)
	takesCommand(cmd)
	return cmd
}

// register adds wrap's flags to cmd (wrap, and profile --class).
func (w *wrapFlags) register(cmd *cobra.Command, class string) {
	fs := cmd.Flags()
	fs.StringVar(&w.name, "name", "", "the class directory's `NAME` (default: the package or command name)")
	fs.StringVar(&w.class, "class", class, "spawn `CLASS` of cordon wrap: mcp_server or external_agent")
	fs.StringArrayVar(&w.allow, "allow-domain", nil, "with --network restricted, a `DOMAIN` the program may reach (repeatable)")
	fs.StringArrayVar(&w.writable, "writable", nil, "another `DIR` the program may write (repeatable)")
	completeValues(cmd, "class", classNames)
	completeDirs(cmd, "writable")
	cmd.RegisterFlagCompletionFunc("allow-domain", noCompletion)
}

// classSettings checks the class and name and returns the class's
// settings and directory (created).
func classSettings(d deployment, f *sandboxFlags, w *wrapFlags, argv []string) (sandbox.Settings, string, error) {
	if w.class != classMCPServer && w.class != classExternalAgent {
		return sandbox.Settings{}, "", usagef("--class %q: use mcp_server or external_agent", w.class)
	}
	name := w.name
	if name == "" {
		name = wrapName(argv)
	} else if name != filepath.Base(name) || name == "." || name == ".." {
		return sandbox.Settings{}, "", usagef("--name %q: one path element, e.g. server-github", name)
	}
	classDir := filepath.Join(d.settings.StateDir, "wrap", name)
	if err := os.MkdirAll(classDir, 0o700); err != nil {
		return sandbox.Settings{}, "", fmt.Errorf("class directory: %w", err)
	}
	set, err := wrapPolicy(d, f, w, classDir)
	return set, classDir, err
}

// wrapPolicy is the class's settings: the deployment's, with the class's
// writable places and network.
func wrapPolicy(d deployment, f *sandboxFlags, w *wrapFlags, classDir string) (sandbox.Settings, error) {
	set := d.settings
	given := f.given()
	prof := d.classes[w.class]
	set.OwnDir = classDir
	set.ExtraWriteAllow = append(append([]string(nil), set.ExtraWriteAllow...), prof.writable...)
	for _, dir := range w.writable {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return set, usagef("--writable %s: %v", dir, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return set, usagef("--writable %s: not an existing directory; create it first", dir)
		}
		set.ExtraWriteAllow = append(set.ExtraWriteAllow, abs)
	}
	switch sandbox.Mode(f.mode) {
	case sandbox.WorkspaceWrite, sandbox.DangerFullAccess:
		set.Mode = sandbox.Mode(f.mode)
	default:
		// The workspace stays readable, not writable: the class
		// directory is where the program writes.
		set.Mode = sandbox.WorkspaceWrite
		set.WorkspaceReadOnly = true
	}
	set.Network = prof.network
	if _, ok := given["--network"]; ok {
		set.Network = d.settings.Network
	}
	for _, dom := range w.allow {
		if err := sandbox.ParseDomain(dom); err != nil {
			return set, usagef("--allow-domain: %v", err)
		}
	}
	if len(w.allow) > 0 && set.Network != sandbox.NetworkRestricted {
		return set, usagef("--allow-domain is for --network restricted; add it, or drop --allow-domain")
	}
	set.AllowedDomains = slices.Concat(set.AllowedDomains, prof.allowed, w.allow)
	return set, nil
}

// wrapEnv is the client's environment without cordon's own variables, with
// the caches and data of runners pointed into the class directory, and
// extra (an agent's config homes) in place of the client's values.
func wrapEnv(host []string, classDir string, extra ...string) []string {
	var env []string
	for _, kv := range host {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(kv, "CORDON_") && !slices.ContainsFunc(extra, func(e string) bool { return strings.HasPrefix(e, name+"=") }) {
			env = append(env, kv)
		}
	}
	env = append(env, extra...)
	for _, v := range []struct{ name, sub string }{
		{"XDG_CACHE_HOME", "cache"}, {"XDG_DATA_HOME", "data"}, {"XDG_STATE_HOME", "state"},
		{"npm_config_cache", "npm"}, {"UV_CACHE_DIR", "uv"}, {"PIP_CACHE_DIR", "pip"},
	} {
		env = append(env, v.name+"="+filepath.Join(classDir, v.sub))
	}
	return env
}

func runWrap(f *sandboxFlags, w *wrapFlags, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	d, err := f.resolve()
	if err != nil {
		return err
	}
	warn := func(msg string) { fmt.Fprintf(stderr, "cordon: warning: %s\n", msg) }
	d.warnings(warn)
	set, classDir, err := classSettings(d, f, w, argv)
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		return err
	case err != nil:
		fmt.Fprintf(stderr, "cordon: sandbox unavailable: %v\n", err)
		return exitCode(exitSandbox)
	}
	var homes []string
	if w.class == classExternalAgent {
		if homes, err = seedAgentHomes(classDir, d.settings.Home, os.Getenv); err != nil {
			fmt.Fprintf(stderr, "cordon: sandbox unavailable: %v\n", err)
			return exitCode(exitSandbox)
		}
		set.ExtraWriteAllow = append(set.ExtraWriteAllow, agentConfigRoots(classDir)...)
	}
	ex := d.executor(warn)
	tmp, err := sandbox.NewSessionTmp(d.settings.StateDir)
	if err != nil {
		fmt.Fprintf(stderr, "cordon: sandbox unavailable: session tmp: %v\n", err)
		return exitCode(exitSandbox)
	}
	defer tmp.Remove()
	set.ProgramTrees = sandbox.ProgramTrees(argv, d.settings.Workspace)
	svc := sandbox.PolicyService{Settings: set}
	pol, err := svc.Resolve(sandbox.Request{TmpDir: tmp.Path})
	if err != nil {
		fmt.Fprintf(stderr, "cordon: sandbox unavailable: %v\n", err)
		return exitCode(exitSandbox)
	}
	return runToExit(ex, pol, sandbox.RunSpec{
		Argv: argv, Dir: d.settings.Workspace, Env: wrapEnv(os.Environ(), classDir, homes...),
		Stdin: stdin, Stdout: stdout, Stderr: stderr,
	})
}
