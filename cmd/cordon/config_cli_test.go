//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cfgEnv is a user with a home, a config directory, a workspace, a state
// directory and a directory outside every writable root, all under
// /var/tmp (bwrap gives the sandbox its own /tmp).
type cfgEnv struct {
	base, home, xdg, ws, state, outside string
}

func newCfgEnv(t *testing.T) *cfgEnv {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "cordon-cfg-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	e := &cfgEnv{base: base, home: filepath.Join(base, "home"), xdg: filepath.Join(base, "xdg"),
		ws: filepath.Join(base, "ws"), state: filepath.Join(base, "state"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{e.home, filepath.Join(e.xdg, "cordon"), e.ws, e.outside} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	return e
}

func (e *cfgEnv) userFile() string      { return filepath.Join(e.xdg, "cordon", "config.toml") }
func (e *cfgEnv) workspaceFile() string { return filepath.Join(e.ws, "cordon.toml") }

func (e *cfgEnv) env(extra ...string) []string {
	return append([]string{"HOME=" + e.home, "XDG_CONFIG_HOME=" + e.xdg, "XDG_STATE_HOME="}, extra...)
}

func (e *cfgEnv) write(t *testing.T, path, doc string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
}

// run runs cordon CMD --state-dir STATE ARGS... in the workspace.
func (e *cfgEnv) run(t *testing.T, env []string, cmd string, args ...string) result {
	t.Helper()
	return cordon(t, append(e.env(), env...), e.ws, append([]string{cmd, "--state-dir", e.state}, args...)...)
}

func (e *cfgEnv) status(t *testing.T, args ...string) map[string]any {
	t.Helper()
	r := e.run(t, nil, "status", append([]string{"--json"}, args...)...)
	require.Equal(t, 0, r.code, r.stderr)
	var st map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	return st
}

// setting is status --json's config.settings[key].
func setting(st map[string]any, key string) (value any, origin map[string]any) {
	s := st["config"].(map[string]any)["settings"].(map[string]any)[key].(map[string]any)
	return s["value"], s["origin"].(map[string]any)
}

func warnings(st map[string]any) []map[string]any {
	var out []map[string]any
	for _, w := range st["config"].(map[string]any)["warnings"].([]any) {
		out = append(out, w.(map[string]any))
	}
	return out
}

func policy(st map[string]any) map[string]any { return st["policy"].(map[string]any) }

func TestConfigWorkspaceCannotWiden(t *testing.T) {
	e := newCfgEnv(t)
	e.write(t, e.userFile(), "network = \"deny\"\n")
	e.write(t, e.workspaceFile(), "mode = \"danger-full-access\"\nnetwork = \"allow\"\nextra_write_allow = [\"/\"]\n")

	st := e.status(t)
	assert.Equal(t, "workspace-write", policy(st)["mode"])
	assert.Equal(t, "deny", policy(st)["network"])
	assert.NotContains(t, policy(st)["writable_roots"], "/")
	_, o := setting(st, "mode")
	assert.Equal(t, "default", o["source"])
	_, o = setting(st, "network")
	assert.Equal(t, map[string]any{"source": "user", "file": e.userFile(), "line": 1.0}, o)
	ws := warnings(st)
	require.Len(t, ws, 3)
	for i, key := range []string{"mode", "network", "extra_write_allow"} {
		assert.Equal(t, e.workspaceFile(), ws[i]["file"])
		assert.Equal(t, float64(i+1), ws[i]["line"])
		assert.Equal(t, key, ws[i]["key"])
		assert.Contains(t, ws[i]["message"], "dropped")
	}

	// exec proves it: no write outside the workspace, not even to /.
	target := filepath.Join(e.outside, "file")
	r := e.run(t, nil, "exec", "--", "sh", "-c", "echo x > "+target)
	assert.NotEqual(t, 0, r.code)
	assert.NoFileExists(t, target)
	for i, key := range []string{"mode", "network", "extra_write_allow"} {
		assert.Contains(t, r.stderr, fmt.Sprintf("cordon: warning: %s:%d: %s: ", e.workspaceFile(), i+1, key))
	}
	atRoot := fmt.Sprintf("/cordon-config-test-%d", os.Getpid())
	defer os.Remove(atRoot)
	r = e.run(t, nil, "exec", "--", "touch", atRoot)
	assert.NotEqual(t, 0, r.code)
	assert.NoFileExists(t, atRoot, "extra_write_allow = [\"/\"] from a workspace file must not open /")
	r = e.run(t, nil, "exec", "--", "touch", filepath.Join(e.ws, "inside"))
	assert.Equal(t, 0, r.code, r.stderr)
	assert.FileExists(t, filepath.Join(e.ws, "inside"), "the workspace itself stays writable")

	// The network stays denied; the flag, which outranks every file, opens it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", ln.Addr().(*net.TCPAddr).Port)
	r = e.run(t, nil, "exec", "--", "bash", "-c", connect)
	assert.NotEqual(t, 0, r.code, "network deny from the user file holds")
	r = e.run(t, nil, "exec", "--network", "allow", "--", "bash", "-c", connect)
	assert.Equal(t, 0, r.code, r.stderr)
}

func TestConfigWorkspaceTightens(t *testing.T) {
	e := newCfgEnv(t)
	e.write(t, e.workspaceFile(), "mode = \"read-only\"\n")
	e.write(t, filepath.Join(e.ws, ".cordon", "config.toml"), "network = \"deny\"\nprotected_paths = [\"deploy/keys\"]\n")
	st := e.status(t)
	assert.Equal(t, "read-only", policy(st)["mode"])
	assert.Equal(t, "deny", policy(st)["network"])
	_, o := setting(st, "mode")
	assert.Equal(t, map[string]any{"source": "workspace", "file": e.workspaceFile(), "line": 1.0}, o)
	_, o = setting(st, "network")
	assert.Equal(t, filepath.Join(e.ws, ".cordon", "config.toml"), o["file"])
	assert.Empty(t, warnings(st))
	assert.Equal(t, "safe", st["preset"], "read-only with ask-dangerous is the safe preset")

	r := e.run(t, nil, "exec", "--", "touch", filepath.Join(e.ws, "new"))
	assert.Equal(t, 1, r.code, r.stderr)
	assert.NoFileExists(t, filepath.Join(e.ws, "new"))

	// protected_paths reach the policy.
	st = e.status(t, "--mode", "workspace-write")
	assert.Contains(t, policy(st)["protected_paths"], filepath.Join(e.ws, "deploy", "keys"))
}

func TestConfigUserFileMayWiden(t *testing.T) {
	e := newCfgEnv(t)
	e.write(t, e.userFile(), "mode = \"danger-full-access\"\n")
	target := filepath.Join(e.outside, "file")
	r := e.run(t, nil, "exec", "--", "touch", target)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.FileExists(t, target, "danger-full-access from the user file runs unconfined")
	st := e.status(t)
	_, o := setting(st, "mode")
	assert.Equal(t, "user", o["source"])

	// Without XDG_CONFIG_HOME, the user file is ~/.config/cordon/config.toml.
	home := filepath.Join(e.home, ".config", "cordon", "config.toml")
	e.write(t, home, "mode = \"read-only\"\n")
	r = e.run(t, []string{"XDG_CONFIG_HOME="}, "status", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
	assert.Equal(t, "read-only", policy(st)["mode"])
	_, o = setting(st, "mode")
	assert.Equal(t, home, o["file"])
}

func TestConfigFlagsOutrankFiles(t *testing.T) {
	e := newCfgEnv(t)
	e.write(t, e.userFile(), "mode = \"read-only\"\nsandbox = \"off\"\nnetwork = \"deny\"\n")
	r := e.run(t, nil, "exec", "--mode", "workspace-write", "--sandbox-required", "--", "touch", filepath.Join(e.ws, "a"))
	assert.Equal(t, 0, r.code, r.stderr)
	assert.FileExists(t, filepath.Join(e.ws, "a"), "--mode widens over the user file")
	st := e.status(t, "--mode", "workspace-write", "--sandbox-required", "--network", "allow")
	for key, want := range map[string]string{"mode": "--mode", "sandbox": "--sandbox-required", "network": "--network"} {
		_, o := setting(st, key)
		assert.Equal(t, map[string]any{"source": "flag", "flag": want}, o, key)
	}
	assert.Equal(t, "required", st["sandbox"])
	assert.Equal(t, "active", st["status"])

	e.write(t, e.userFile(), "mode = \"danger-full-access\"\nsandbox = \"required\"\n")
	target := filepath.Join(e.outside, "b")
	r = e.run(t, nil, "exec", "--mode", "read-only", "--", "touch", target)
	assert.NotEqual(t, 0, r.code)
	assert.NoFileExists(t, target, "--mode narrows over the user file")
	st = e.status(t, "--no-sandbox")
	assert.Equal(t, "off", st["sandbox"])
	assert.Equal(t, "bypassed", st["status"])

	// Flags outrank the workspace file too, and --config outranks the user's.
	e.write(t, e.workspaceFile(), "mode = \"read-only\"\n")
	r = e.run(t, nil, "exec", "--mode", "workspace-write", "--", "touch", filepath.Join(e.ws, "c"))
	assert.Equal(t, 0, r.code, r.stderr)
	explicit := filepath.Join(e.base, "explicit.toml")
	e.write(t, explicit, "network = \"deny\"\n\nmode = \"workspace-write\"\n")
	st = e.status(t, "--config", explicit)
	assert.Equal(t, "workspace-write", policy(st)["mode"])
	_, o := setting(st, "mode")
	assert.Equal(t, map[string]any{"source": "config", "file": explicit, "line": 3.0}, o)
	files := st["config"].(map[string]any)["files"].([]any)
	require.Len(t, files, 3)
	assert.Equal(t, []string{"user", "workspace", "config"}, []string{
		files[0].(map[string]any)["layer"].(string), files[1].(map[string]any)["layer"].(string), files[2].(map[string]any)["layer"].(string)})
}

func TestConfigErrorsStopEveryCommand(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, e *cfgEnv) (args []string)
		want  func(e *cfgEnv) string
	}{
		{"unknown key", func(t *testing.T, e *cfgEnv) []string {
			e.write(t, e.userFile(), "mode = \"read-only\"\nfrobnicate = 1\n")
			return nil
		}, func(e *cfgEnv) string { return e.userFile() + ":2: frobnicate: unknown key" }},
		{"wrong type", func(t *testing.T, e *cfgEnv) []string {
			e.write(t, e.workspaceFile(), "network = true\n")
			return nil
		}, func(e *cfgEnv) string { return e.workspaceFile() + ":1: network: must be a string" }},
		{"relative extra_write_allow", func(t *testing.T, e *cfgEnv) []string {
			e.write(t, filepath.Join(e.base, "c.toml"), "\nextra_write_allow = [\"build/cache\"]\n")
			return []string{"--config", filepath.Join(e.base, "c.toml")}
		}, func(e *cfgEnv) string {
			return filepath.Join(e.base, "c.toml") + `:2: extra_write_allow: entry 1 ("build/cache"): must start with / or ~/`
		}},
		{"env_passthrough star", func(t *testing.T, e *cfgEnv) []string {
			e.write(t, e.userFile(), "env_passthrough = [\"*\"]\n")
			return nil
		}, func(e *cfgEnv) string { return e.userFile() + `:1: env_passthrough: entry 1 ("*"): a bare "*"` }},
		{"directory in place of the file", func(t *testing.T, e *cfgEnv) []string {
			require.NoError(t, os.Mkdir(e.userFile(), 0o755))
			return nil
		}, func(e *cfgEnv) string { return e.userFile() + ": cannot read the config: it is a directory" }},
		{"FIFO in place of the file", func(t *testing.T, e *cfgEnv) []string {
			require.NoError(t, syscall.Mkfifo(e.workspaceFile(), 0o644))
			return nil
		}, func(e *cfgEnv) string { return e.workspaceFile() + ": cannot read the config: it is a FIFO" }},
		{"missing --config", func(t *testing.T, e *cfgEnv) []string {
			return []string{"--config", filepath.Join(e.base, "nope.toml")}
		}, func(e *cfgEnv) string { return "--config " + filepath.Join(e.base, "nope.toml") + ": no such file" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newCfgEnv(t)
			args := c.setup(t, e)
			want := c.want(e)
			marker := filepath.Join(e.ws, "ran")

			r := e.run(t, nil, "exec", append(args, "--", "touch", marker)...)
			assert.Equal(t, exitUsage, r.code, r.stderr)
			assert.Contains(t, r.stderr, want)
			assert.NoFileExists(t, marker, "nothing may run with a bad config")

			r = e.run(t, nil, "status", args...)
			assert.Equal(t, exitUsage, r.code, r.stderr)
			assert.Contains(t, r.stderr, want)
			assert.Empty(t, r.stdout)

			cmd := exec.Command(cordonBin, append([]string{"serve", "--state-dir", e.state}, args...)...)
			cmd.Dir, cmd.Env = e.ws, append(os.Environ(), e.env()...)
			cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, exitUsage, ee.ExitCode(), stderr.String())
			assert.Contains(t, stderr.String(), want)
			// The handshake is answered, so that the human's client shows
			// the reason instead of "connection closed"; no tool runs.
			assert.Contains(t, stdout.String(), `"instructions":"cordon is not working: `, "the client learns why")
			assert.NoDirExists(t, filepath.Join(e.state, "sessions"), "no session is started")
		})
	}
}

// TestConfigUnreadableFile: a config that exists but cannot be read is an
// error, not a file to skip. As root, the command runs as nobody.
func TestConfigUnreadableFile(t *testing.T) {
	e := newCfgEnv(t)
	e.write(t, e.userFile(), "mode = \"read-only\"\n")
	require.NoError(t, os.Chmod(e.userFile(), 0o000))
	cmd := exec.Command(cordonBin, "status", "--state-dir", e.state)
	cmd.Dir, cmd.Env = e.ws, append(os.Environ(), e.env()...)
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, string(out))
	assert.Equal(t, exitUsage, ee.ExitCode())
	assert.Contains(t, string(out), e.userFile()+": cannot read the config: permission denied")
}

func TestConfigEnvPassthrough(t *testing.T) {
	e := newCfgEnv(t)
	e.write(t, e.userFile(), "env_passthrough = [\"CORDON_TEST_PASS\"]\n")
	e.write(t, e.workspaceFile(), "env_passthrough = [\"GITHUB_TOKEN\"]\n")
	secrets := []string{"AWS_SECRET_ACCESS_KEY=aws-canary", "GITHUB_TOKEN=gh-canary", "OPENAI_API_KEY=openai-canary"}
	for _, backend := range []string{"bwrap", "landlock"} {
		r := e.run(t, append([]string{"CORDON_TEST_PASS=passed-through"}, secrets...), "exec", "--backend", backend, "--", "env")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "CORDON_TEST_PASS=passed-through\n")
		for _, s := range secrets {
			assert.NotContains(t, r.stdout, s)
		}
		assert.Contains(t, r.stderr, e.workspaceFile()+":1: env_passthrough:", "the workspace's passthrough is dropped with a warning")
	}
}

func TestConfigStatusReportsOrigins(t *testing.T) {
	e := newCfgEnv(t)
	e.write(t, e.userFile(), "preset = \"safe\"\ndangerous_commands = [\"kubectl delete\"]\n[bash]\ntimeout = \"1m\"\n")
	e.write(t, e.workspaceFile(), "dangerous_commands = [\"terraform destroy\"]\nbash.timeout = \"5m\"\n")
	r := e.run(t, nil, "status", "--network", "deny")
	require.Equal(t, 0, r.code, r.stderr)
	for _, want := range []string{
		"config files:\n  " + e.userFile() + " (user)\n  " + e.workspaceFile() + " (workspace)\n",
		"settings (value, origin):",
		"preset ", "user file " + e.userFile() + ":1",
		"network ", "flag --network",
		"kubectl delete, terraform destroy",
		"terraform destroy", "workspace file " + e.workspaceFile() + ":1",
		"bash.timeout ", "1m0s",
		"warnings (dropped from workspace files):\n  " + e.workspaceFile() + ":2: bash.timeout: 5m0s is longer than 1m0s",
		"rules (who enforces them for commands):",
	} {
		assert.Contains(t, r.stdout, want)
	}

	st := e.status(t, "--backend", "landlock")
	assert.Equal(t, "safe", st["preset"])
	v, o := setting(st, "dangerous_commands")
	assert.Equal(t, []any{"kubectl delete", "terraform destroy"}, v)
	assert.Equal(t, "workspace", o["source"])
	entries := st["config"].(map[string]any)["settings"].(map[string]any)["dangerous_commands"].(map[string]any)["entries"].([]any)
	assert.Equal(t, "user", entries[0].(map[string]any)["origin"].(map[string]any)["source"])
	_, o = setting(st, "workspace")
	assert.Equal(t, "cwd", o["source"])
	rules := map[string]string{}
	for _, r := range st["rules"].([]any) {
		rules[r.(map[string]any)["rule"].(string)] = r.(map[string]any)["enforced"].(string)
	}
	assert.Equal(t, "os", rules["writes outside the writable roots"])
	assert.Equal(t, "guard", rules["protected paths"], "Landlock guards protected paths: restored after each command")
	assert.Equal(t, "partial", rules["read-deny list"], "Landlock refuses reads of the read-deny list but for names and entries in writable roots")
}

// TestStatusNetworkRestricted: the lists, who enforces them, and under
// Landlock the partial rule with its reason and the seccomp lines.
func TestStatusNetworkRestricted(t *testing.T) {
	e := newCfgEnv(t)
	e.write(t, e.userFile(), "network = \"restricted\"\nallowed_domains = [\"github.com\", \"*.npmjs.org\"]\ndenied_domains = [\"pastebin.com\"]\n")
	for _, backend := range []string{"bwrap", "landlock"} {
		st := e.status(t, "--backend", backend)
		pol := st["policy"].(map[string]any)
		assert.Equal(t, "restricted", pol["network"])
		assert.Equal(t, []any{"github.com", "*.npmjs.org"}, pol["allowed_domains"])
		assert.Equal(t, []any{"pastebin.com"}, pol["denied_domains"])
		assert.Contains(t, pol["network_enforcer"], "egress proxy")
		rules := map[string]map[string]any{}
		for _, r := range st["rules"].([]any) {
			rules[r.(map[string]any)["rule"].(string)] = r.(map[string]any)
		}
		var seccomp []string
		for _, s := range st["seccomp"].([]any) {
			seccomp = append(seccomp, s.(string))
		}
		assert.Contains(t, strings.Join(seccomp, "\n"), "network restricted: of inet sockets only TCP")
		if backend == "bwrap" {
			assert.Equal(t, "os", rules["network restricted"]["enforced"])
			continue
		}
		assert.Equal(t, "partial", rules["network restricted"]["enforced"])
		assert.Contains(t, rules["network restricted"]["detail"], "any host, local or remote, is reachable on that one port number")
	}
	r := e.run(t, nil, "status")
	assert.Contains(t, r.stdout, "allowed:    github.com, *.npmjs.org")
	assert.Contains(t, r.stdout, "denied:     pastebin.com")
}
