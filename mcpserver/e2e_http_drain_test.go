//go:build linux

package mcpserver_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/testenv"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func getStatus(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestHTTPDrain: /healthz and /readyz answer without a token; on SIGTERM
// /readyz turns 503 at once, a new session is refused with 503 and
// Retry-After, the call in flight completes, and then every session ends
// with its processes' process/exit events in a log that verifies, and
// cordon exits 0.
func TestHTTPDrain(t *testing.T) {
	w := newWorld(t)
	cfg := filepath.Join(w.base, "serve.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("[http]\ndrain_timeout = \"60s\"\n"), 0o644))
	url, token, cmd := w.httpServer(t, "--config", cfg)
	base := strings.TrimSuffix(url, "/mcp")
	assert.Equal(t, http.StatusOK, getStatus(base+"/healthz"))
	require.True(t, eventually(func() bool { return getStatus(base+"/readyz") == http.StatusOK }), "ready once the probe passed")

	cs := connectHTTP(t, url, token, clientOpts{version: "2025-11-25"})
	bg := fmt.Sprintf("drain-bg-%d", time.Now().UnixNano())
	startBackground(t, cs, map[string]any{"command": "sleep 600 # " + bg})
	fg := fmt.Sprintf("drain-fg-%d", time.Now().UnixNano())
	result := make(chan string, 1)
	go func() {
		res, err := tryCall(cs, "bash", map[string]any{"command": "sleep 3 # " + fg + "\necho call-finished"})
		if err != nil {
			result <- "error: " + err.Error()
			return
		}
		result <- text(res)
	}()
	require.True(t, eventually(func() bool { return len(processesWith(fg)) > 0 }), "the call is running")

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.True(t, eventually(func() bool { return getStatus(base+"/readyz") == http.StatusServiceUnavailable }), "/readyz turns 503")
	assert.Equal(t, http.StatusOK, getStatus(base+"/healthz"), "the process still serves")
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err := http.DefaultClient.Do(req); err == nil { // the drain may already be over
		resp.Body.Close()
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "no new session while draining")
		assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	}

	select {
	case out := <-result:
		assert.Contains(t, out, "call-finished", "the call in flight completes")
	case <-time.After(60 * time.Second):
		t.Fatal("the call in flight did not complete")
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err, "cordon exits 0 after a drain")
	case <-time.After(60 * time.Second):
		t.Fatal("cordon did not exit after the drain")
	}
	assert.True(t, gone(bg), "no process is left")
	files, _ := filepath.Glob(filepath.Join(w.state, "sessions", "*.jsonl"))
	found := false
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if !strings.Contains(string(b), bg) {
			continue
		}
		found = true
		assert.Contains(t, string(b), `"reason":"session-ended"`, "the killed process's end is logged")
		assert.Contains(t, string(b), `"signal":"`, "with the signal that ended it")
		id := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		cordonCLI(t, w, "log", id, "--verify")
	}
	assert.True(t, found, "the session's log")
}

// TestHTTPHealthAsNonRoot: a cordon that is not root answers /healthz and
// /readyz to a prober of another user (here root: a kubelet, a sidecar),
// whose descriptors it cannot read, and drains on SIGTERM to exit 0.
func TestHTTPHealthAsNonRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.SkipUnlessCI(t, "needs root to start cordon as another user")
	}
	w := newWorld(t)
	require.NoError(t, filepath.WalkDir(w.base, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 65534, 65534)
	}))
	addr := freeAddr(t)
	cmd := exec.Command(cordonBin, w.serveArgs("--http", addr)...)
	cmd.Env = w.env()
	cmd.Dir = w.base
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Stderr = &testLogWriter{t: t}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := "http://" + addr
	require.True(t, eventually(func() bool { return getStatus(base+"/healthz") == http.StatusOK }), "/healthz answers another user")
	require.True(t, eventually(func() bool { return getStatus(base+"/readyz") == http.StatusOK }), "/readyz answers another user")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err, "exits 0 after the drain")
	case <-time.After(60 * time.Second):
		t.Fatal("cordon did not exit after SIGTERM")
	}
}
