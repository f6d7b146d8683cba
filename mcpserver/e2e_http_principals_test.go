//go:build linux

package mcpserver_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tokenCLI runs `cordon token ...` and returns its stdout.
func tokenCLI(t *testing.T, w *world, args ...string) string {
	t.Helper()
	cmd := exec.Command(cordonBin, append(append([]string{"token"}, args...), "--state-dir", w.state)...)
	cmd.Env = w.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "cordon token %v: %s", args, stderr.String())
	return string(out)
}

// logsOf are the session logs that name principal, joined.
func logsOf(t *testing.T, w *world, principal string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(w.state, "sessions", "*.jsonl"))
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		first, _, _ := strings.Cut(string(b), "\n")
		if strings.Contains(first, `"principal":"`+principal+`"`) {
			all.Write(b)
		}
	}
	return all.String()
}

// TestHTTPPrincipals: tokens added with `cordon token add` name
// principals, each with its own sessions, process ids and logs, on both
// protocol eras; neither can list, read or kill the other's processes; a
// principal's own workspace applies; a revoked token is refused at once
// and its sessions end; a forgotten token session ends when idle, its
// process killed and logged.
func TestHTTPPrincipals(t *testing.T) {
	w := newWorld(t)
	bobWS := filepath.Join(w.base, "bob ws")
	require.NoError(t, os.MkdirAll(bobWS, 0o755))
	alice := strings.TrimSpace(tokenCLI(t, w, "add", "alice"))
	bob := strings.TrimSpace(tokenCLI(t, w, "add", "bob", "--workspace", bobWS))
	require.Len(t, alice, 64)
	st, err := os.Stat(filepath.Join(w.state, "http-tokens"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	file, _ := os.ReadFile(filepath.Join(w.state, "http-tokens"))
	assert.NotContains(t, string(file), alice, "only the token's hash is kept")
	list := tokenCLI(t, w, "list")
	assert.Contains(t, list, "alice")
	assert.Contains(t, list, "bob\t"+bobWS)
	assert.NotContains(t, list, alice)

	cfg := filepath.Join(w.base, "serve.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("[http]\nidle_timeout = \"3s\"\n"), 0o644))
	url, own, _ := w.httpServer(t, "--config", cfg, "--mode", "workspace-write")

	_, err = tryConnectHTTP(url, "not-a-token-of-anyone-at-all", clientOpts{version: "2025-11-25"})
	require.Error(t, err, "an unknown token is refused")

	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			a := connectHTTP(t, url, alice, clientOpts{version: v})
			b := connectHTTP(t, url, bob, clientOpts{version: v})
			marker := fmt.Sprintf("alice-secret-%d", time.Now().UnixNano())
			id, _ := startBackground(t, a, map[string]any{"command": "sleep 600 # " + marker})
			assert.NotContains(t, text(call(t, b, "process_list", map[string]any{})), marker, "bob cannot list alice's process")
			for _, tool := range []string{"process_output", "process_kill"} {
				res := call(t, b, tool, map[string]any{"process_id": id})
				assert.True(t, res.IsError, tool)
				assert.Equal(t, "NOT_FOUND", errorCode(t, res), tool)
			}
			assert.Contains(t, text(call(t, a, "process_list", map[string]any{})), marker, "alice's process lives on")
			assert.NotEmpty(t, processesWith(marker))

			// The server's own token is a principal of its own, too.
			o := connectHTTP(t, url, own, clientOpts{version: v})
			assert.NotContains(t, text(call(t, o, "process_list", map[string]any{})), marker)

			// bob runs in his own workspace.
			res := call(t, b, "bash", map[string]any{"command": "pwd; touch bob-was-here"})
			require.False(t, res.IsError, text(res))
			assert.Contains(t, text(res), bobWS)
			assert.FileExists(t, filepath.Join(bobWS, "bob-was-here"))
			assert.NoFileExists(t, filepath.Join(w.ws, "bob-was-here"))

			call(t, a, "process_kill", map[string]any{"process_id": id, "signal": "KILL"})
			assert.True(t, gone(marker))
			assert.Contains(t, logsOf(t, w, "alice"), marker)
			assert.NotContains(t, logsOf(t, w, "bob"), marker, "alice's commands are not in bob's log")
		})
	}

	t.Run("idle token session ends, its process killed and logged", func(t *testing.T) {
		carol := strings.TrimSpace(tokenCLI(t, w, "add", "carol"))
		c, err := tryConnectHTTP(url, carol, clientOpts{version: "2026-07-28"})
		require.NoError(t, err, "a token added to a running server is honoured")
		marker := fmt.Sprintf("carol-forgotten-%d", time.Now().UnixNano())
		startBackground(t, c, map[string]any{"command": "sleep 600 # " + marker})
		c.Close()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) && !strings.Contains(logsOf(t, w, "carol"), `"reason":"session-ended"`) {
			time.Sleep(100 * time.Millisecond)
		}
		assert.Contains(t, logsOf(t, w, "carol"), `"reason":"session-ended"`)
		assert.True(t, gone(marker), "the idle session's process is killed")
	})

	t.Run("a revoked token is refused and its sessions end", func(t *testing.T) {
		d := connectHTTP(t, url, bob, clientOpts{version: "2025-11-25"})
		marker := fmt.Sprintf("bob-revoked-%d", time.Now().UnixNano())
		startBackground(t, d, map[string]any{"command": "sleep 600 # " + marker})
		tokenCLI(t, w, "revoke", "bob")
		assert.True(t, eventually(func() bool { return len(processesWith(marker)) == 0 }), "a revoked principal's processes end at once")
		_, err := tryCall(d, "process_list", map[string]any{})
		assert.Error(t, err, "a revoked token is refused")
		assert.NotContains(t, tokenCLI(t, w, "list"), "bob")
	})
}

func eventually(cond func() bool) bool {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}
