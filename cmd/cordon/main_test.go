//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var cordonBin string

// TestMain builds the real binary once; every test drives it as a user would.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("/var/tmp", "cordon-cli-test-")
	if err != nil {
		panic(err)
	}
	os.Chmod(dir, 0o755)
	// No test may read the config of the machine it runs on.
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "no-config"))
	cordonBin = filepath.Join(dir, "cordon")
	if out, err := exec.Command("go", "build", "-o", cordonBin, ".").CombinedOutput(); err != nil {
		panic("building cordon: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

func cordon(t *testing.T, env []string, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(cordonBin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{code, stdout.String(), stderr.String()}
}

// workspace makes a workspace and a state dir outside /tmp (bwrap gives
// the sandbox its own /tmp).
func workspace(t *testing.T) (ws, state string) {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "cordon-cli-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	ws, state = filepath.Join(base, "ws"), filepath.Join(base, "state")
	require.NoError(t, os.Mkdir(ws, 0o755))
	return ws, state
}

func TestExecBadInput(t *testing.T) {
	ws, state := workspace(t)
	file := filepath.Join(ws, "plain-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	marker := filepath.Join(ws, "ran")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown mode", []string{"--mode", "everything"}, `--mode: unknown mode "everything": use one of read-only, workspace-write, danger-full-access`},
		{"unknown backend", []string{"--backend", "docker"}, `--backend: unknown backend "docker"`},
		{"unknown network", []string{"--network", "maybe"}, `--network: unknown network setting "maybe"`},
		{"missing workspace", []string{"--workspace", filepath.Join(ws, "nope")}, "no such directory"},
		{"workspace is a file", []string{"--workspace", file}, "not a directory"},
		{"mode with no-sandbox", []string{"--mode", "read-only", "--no-sandbox"}, "--mode cannot be combined with --no-sandbox"},
		{"conflicting sandbox flags", []string{"--sandbox", "--no-sandbox"}, "mutually exclusive"},
		{"unknown flag", []string{"--frobnicate"}, "unknown flag --frobnicate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"exec", "--state-dir", state}, c.args...)
			args = append(args, "--", "touch", marker)
			r := cordon(t, nil, ws, args...)
			assert.Equal(t, exitUsage, r.code, r.stderr)
			assert.Contains(t, r.stderr, c.want)
			assert.NoFileExists(t, marker, "nothing may run on a usage error")
		})
	}
	r := cordon(t, nil, ws, "exec", "--state-dir", state)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "no command given")
	r = cordon(t, nil, ws, "exec", "--state-dir", state, "--", "")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "the command is empty")
	r = cordon(t, nil, ws, "frobnicate")
	assert.Equal(t, exitUsage, r.code)
}

func TestExecPassesThrough(t *testing.T) {
	ws, state := workspace(t)
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			r := cordon(t, nil, ws, "exec", "--backend", backend, "--state-dir", state, "--", "sh", "-c", "echo out; echo err >&2; exit 7")
			assert.Equal(t, 7, r.code)
			assert.Equal(t, "out\n", r.stdout)
			assert.Equal(t, "err\n", r.stderr)
			cmd := exec.Command(cordonBin, "exec", "--backend", backend, "--state-dir", state, "--", "cat")
			cmd.Dir, cmd.Stdin = ws, strings.NewReader("from stdin")
			out, err := cmd.Output()
			require.NoError(t, err)
			assert.Equal(t, "from stdin", string(out))
			r = cordon(t, nil, ws, "exec", "--backend", backend, "--mode", "read-only", "--state-dir", state, "--", "touch", "x")
			assert.Equal(t, 1, r.code)
			assert.NoFileExists(t, filepath.Join(ws, "x"))
		})
	}
}

// noBwrapPath is a PATH with the tools the tests run but no bwrap.
func noBwrapPath(t *testing.T) string {
	dir := t.TempDir()
	for _, tool := range []string{"sh", "touch", "true", "cat"} {
		p, err := exec.LookPath(tool)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(dir, tool)))
	}
	return "PATH=" + dir
}

func TestExecFailsClosed(t *testing.T) {
	ws, state := workspace(t)
	env := []string{noBwrapPath(t)}
	marker := filepath.Join(ws, "ran")
	r := cordon(t, env, ws, "exec", "--backend", "bwrap", "--mode", "read-only", "--state-dir", state, "--", "touch", marker)
	assert.Equal(t, exitSandbox, r.code, r.stderr)
	assert.True(t, strings.HasPrefix(r.stderr, "cordon: sandbox unavailable:"), r.stderr)
	assert.Contains(t, r.stderr, "install bubblewrap")
	assert.NoFileExists(t, marker, "nothing may run when the sandbox is unavailable")

	r = cordon(t, env, ws, "exec", "--backend", "bwrap", "--mode", "workspace-write", "--state-dir", state, "--", "touch", marker)
	assert.Equal(t, exitSandbox, r.code)
	assert.NoFileExists(t, marker)

	r = cordon(t, env, ws, "exec", "--backend", "bwrap", "--mode", "danger-full-access", "--state-dir", state, "--", "touch", marker)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.FileExists(t, marker, "danger-full-access runs unconfined")
	os.Remove(marker)

	r = cordon(t, env, ws, "exec", "--backend", "bwrap", "--sandbox", "--state-dir", state, "--", "touch", marker)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "warning: running unconfined")
	assert.FileExists(t, marker, "--sandbox (auto) runs unconfined with a warning")

	r = cordon(t, env, ws, "status", "--state-dir", state)
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "backend:      landlock", "without bwrap, detection falls back to Landlock")
}

func TestStatusJSON(t *testing.T) {
	ws, state := workspace(t)
	for _, backend := range []string{"bwrap", "landlock"} {
		r := cordon(t, nil, ws, "status", "--json", "--backend", backend, "--state-dir", state, "--network", "deny")
		require.Equal(t, 0, r.code, r.stderr)
		var st map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &st))
		assert.Equal(t, "active", st["status"])
		assert.Equal(t, backend, st["backend"])
		assert.NotEmpty(t, st["version"])
		assert.Greater(t, st["probe_ns"], 0.0)
		policy := st["policy"].(map[string]any)
		assert.Equal(t, "workspace-write", policy["mode"])
		assert.Equal(t, "deny", policy["network"])
		if backend == "bwrap" {
			assert.Equal(t, "full", st["enforcement"])
		} else {
			assert.Equal(t, "partial", st["enforcement"])
			assert.NotEmpty(t, st["unenforced"])
		}
	}
}

func TestStatusExplainsNamespaceFailure(t *testing.T) {
	ws, state := workspace(t)
	dir := t.TempDir()
	fake := "#!/bin/sh\ncase \"$1\" in --version) echo 'bubblewrap 0.9.0';; *) echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1;; esac\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bwrap"), []byte(fake), 0o755))
	env := []string{"PATH=" + dir + ":" + os.Getenv("PATH")}
	r := cordon(t, env, ws, "status", "--backend", "bwrap", "--state-dir", state)
	assert.Equal(t, exitFailure, r.code)
	assert.Contains(t, r.stdout, "status:       unavailable")
	assert.Contains(t, r.stdout, "bwrap cannot create")
	// On a host the advice is AppArmor's; where the tests themselves run
	// in a container, the container's (sandbox.TestExplainBwrapFailureInContainer).
	if !strings.Contains(r.stdout, "bwrap-userns-restrict") && !strings.Contains(r.stdout, "selects Landlock by itself") {
		t.Errorf("the reason gives no fix:\n%s", r.stdout)
	}
}

func TestSelfTest(t *testing.T) {
	ws, state := workspace(t)
	for _, backend := range []string{"bwrap", "landlock"} {
		r := cordon(t, nil, ws, "test", "--backend", backend, "--state-dir", state)
		assert.Equal(t, 0, r.code, r.stdout+r.stderr)
		assert.Contains(t, r.stdout, "contained: backend "+backend)
	}
	r := cordon(t, nil, ws, "test", "--mode", "danger-full-access", "--state-dir", state)
	assert.Equal(t, exitFailure, r.code)
}

// TestSelfTestFreshHome: a user with an empty home (a container's tmpfs)
// and the default state dir, which the read-deny list holds, has no file
// of their own to test against; cordon test proves containment on a
// canary of its own outside the boundary, and removes it. Not as root,
// who could always use /etc/hostname.
func TestSelfTestFreshHome(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "cordon fresh home ")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	home, ws := filepath.Join(base, "home"), filepath.Join(base, "ws")
	for _, d := range []string{home, ws} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	require.NoError(t, os.Chmod(base, 0o755))
	for _, backend := range []string{"bwrap", "landlock"} {
		cmd := exec.Command(cordonBin, "test", "--backend", backend)
		cmd.Dir, cmd.Env = ws, append(os.Environ(), "HOME="+home, "XDG_STATE_HOME=", "XDG_CACHE_HOME=")
		if os.Geteuid() == 0 {
			require.NoError(t, os.Chown(home, 65534, 65534))
			require.NoError(t, os.Chown(ws, 65534, 65534))
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		assert.Contains(t, string(out), "contained: backend "+backend)
		assert.Contains(t, string(out), filepath.Join(home, ".cache", "cordon"), "the canary is cordon's own")
		left, _ := filepath.Glob(filepath.Join(home, ".cache", "cordon", "*"))
		assert.Empty(t, left, "the canary is removed")
	}
}

func TestProfileHasEveryBwrapFlag(t *testing.T) {
	ws, state := workspace(t)
	r := cordon(t, nil, ws, "profile", "--json", "--backend", "bwrap", "--network", "deny", "--state-dir", state)
	require.Equal(t, 0, r.code, r.stderr)
	var prof profileReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &prof))
	argv := strings.Join(prof.Argv, " ")
	for _, flag := range []string{"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup",
		"--disable-userns", "--die-with-parent", "--new-session", "--ro-bind / /", "--dev /dev", "--proc /proc",
		"/tmp", "--bind ", "--unshare-net", "__sandbox-helper", "--net-deny"} {
		assert.Contains(t, argv, flag)
	}
	assert.Equal(t, []string{"bash", "-c", "COMMAND"}, prof.Argv[len(prof.Argv)-3:])
	r = cordon(t, nil, ws, "profile", "--backend", "landlock", "--mode", "read-only", "--state-dir", state)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "# mode read-only, backend landlock, enforcement partial")
	assert.Contains(t, r.stdout, "--metadata-deny")
	assert.NoFileExists(t, filepath.Join(ws, ".bashrc"), "profile must not leave mount stubs")
	entries, _ := os.ReadDir(ws)
	assert.Empty(t, entries)
}

func TestVersion(t *testing.T) {
	r := cordon(t, nil, "", "version")
	assert.Equal(t, 0, r.code)
	assert.True(t, strings.HasPrefix(r.stdout, "cordon "))
}

// TestHTTPTokenFileRefusedOnLandlock: Landlock cannot hide a generated
// token file from confined commands (which could then approve their own
// escalations), so serve --http needs CORDON_HTTP_TOKEN there.
func TestHTTPTokenFileRefusedOnLandlock(t *testing.T) {
	ws, state := workspace(t)
	r := cordon(t, []string{"CORDON_HTTP_TOKEN="}, ws, "serve", "--http", "127.0.0.1:0", "--backend", "landlock", "--state-dir", state)
	assert.NotEqual(t, 0, r.code)
	assert.Contains(t, r.stderr, "CORDON_HTTP_TOKEN")
	assert.NoFileExists(t, filepath.Join(state, "http-token"))
}

// TestHTTPUnauthorizedSaysWhatIsNeeded: a request without the right token
// gets a 401 that names the token and where it is, in the body and in the
// Bearer challenge, so that an MCP client's failed OAuth attempt is not
// all its user learns.
func TestHTTPUnauthorizedSaysWhatIsNeeded(t *testing.T) {
	e := newCfgEnv(t)
	srv := startServe(t, e, "--http", "127.0.0.1:0")
	var logged struct {
		Addr string `json:"addr"`
	}
	require.NoError(t, json.Unmarshal([]byte(srv.waitLog(t, "serving MCP over HTTP at /mcp")), &logged))
	challenge := regexp.MustCompile(`^Bearer realm="cordon", error="invalid_token", error_description="([^"\\]+)"$`)
	for _, auth := range []string{"", "Bearer wrong", "wrong"} {
		req, err := http.NewRequest(http.MethodPost, "http://"+logged.Addr+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, auth)
		assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain"), resp.Header.Get("Content-Type"))
		m := challenge.FindStringSubmatch(resp.Header.Get("WWW-Authenticate"))
		require.NotNil(t, m, "a well-formed Bearer challenge: %s", resp.Header.Get("WWW-Authenticate"))
		for _, text := range []string{m[1], string(body)} {
			for _, want := range []string{"bearer token", "Authorization: Bearer TOKEN", "<state-dir>/http-token", "CORDON_HTTP_TOKEN"} {
				assert.Contains(t, text, want)
			}
		}
	}
	srv.cmd.Process.Signal(syscall.SIGTERM)
}
