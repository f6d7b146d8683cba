//go:build linux

package mcpserver_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func post(t *testing.T, url string, headers map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(initBody))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func TestHTTPAuth(t *testing.T) {
	w := newWorld(t)
	url, token, _ := w.httpServer(t)
	fi, err := os.Stat(filepath.Join(w.state, "http-token"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the token file is private")
	assert.Len(t, token, 64)

	assert.Equal(t, http.StatusUnauthorized, post(t, url, nil), "no token")
	assert.Equal(t, http.StatusUnauthorized, post(t, url, map[string]string{"Authorization": "Bearer wrong"}), "wrong token")
	assert.Equal(t, http.StatusUnauthorized, post(t, url, map[string]string{"Authorization": token}), "token without Bearer")
	assert.Equal(t, http.StatusForbidden, post(t, url, map[string]string{"Authorization": "Bearer " + token, "Origin": "https://evil.example"}), "foreign Origin")
	assert.Equal(t, http.StatusOK, post(t, url, map[string]string{"Authorization": "Bearer " + token}))
}

func TestHTTPRefusesPublicAddressWithoutToken(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command(cordonBin, w.serveArgs("--http", "0.0.0.0:0")...)
	cmd.Env = w.env()
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "not a loopback address")
	assert.Contains(t, string(out), "CORDON_HTTP_TOKEN")
}

func TestHTTPConcurrentSessions(t *testing.T) {
	w := newWorld(t)
	url, token, _ := w.httpServer(t)
	const n = 32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// No require in goroutines: failures are collected instead.
			cs, err := tryConnectHTTP(url, token, clientOpts{version: "2025-11-25"})
			if err != nil {
				errs <- fmt.Errorf("session %d: connect: %v", i, err)
				return
			}
			defer cs.Close()
			res, err := tryCall(cs, "bash", map[string]any{"command": fmt.Sprintf("echo %d > /tmp/mine; echo %d > f%d; sleep 0.2; cat /tmp/mine f%d", i, i, i, i)})
			if err != nil {
				errs <- fmt.Errorf("session %d: bash: %v", i, err)
				return
			}
			want := fmt.Sprintf("%d\n%d\n", i, i)
			if st, _ := res.StructuredContent.(map[string]any); st["output"] != want {
				errs <- fmt.Errorf("session %d: got %q, want %q", i, st["output"], want)
			}
			res, err = tryCall(cs, "write_file", map[string]any{"path": fmt.Sprintf("w%d.txt", i), "content": fmt.Sprint("written by ", i)})
			if err != nil || res.IsError {
				errs <- fmt.Errorf("session %d: write_file: %v", i, err)
				return
			}
			res, err = tryCall(cs, "read_file", map[string]any{"path": fmt.Sprintf("w%d.txt", i)})
			if err != nil || res.IsError || !strings.HasSuffix(text(res), fmt.Sprintf("w%d.txt: lines 1-1 of 1]\n     1\twritten by %d\n", i, i)) {
				errs <- fmt.Errorf("session %d: read_file: %v %q", i, err, text(res))
				return
			}
			res, err = tryCall(cs, "sandbox_status", nil)
			if err != nil {
				errs <- fmt.Errorf("session %d: status: %v", i, err)
				return
			}
			st, _ := res.StructuredContent.(map[string]any)
			if roots := fmt.Sprint(st["writable_roots"]); !strings.Contains(roots, w.state) {
				errs <- fmt.Errorf("session %d: no session tmp in %s", i, roots)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range n {
		assert.Equal(t, fmt.Sprintf("%d\n", i), fileContent(t, filepath.Join(w.ws, fmt.Sprintf("f%d", i))))
	}
}

func TestHTTPGracefulShutdown(t *testing.T) {
	w := newWorld(t)
	url, token, cmd := w.httpServer(t)
	cs := connectHTTP(t, url, token, clientOpts{version: "2025-11-25"})
	late := filepath.Join(w.ws, "late")
	go cs.CallTool(t.Context(), mcpCall("bash", map[string]any{"command": fmt.Sprintf("(sleep 2; touch %s) & sleep 60", late)}))
	time.Sleep(700 * time.Millisecond)
	// SIGINT ends at once; SIGTERM drains first (TestHTTPDrain).
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("cordon did not shut down on SIGINT")
	}
	time.Sleep(2500 * time.Millisecond)
	assert.NoFileExists(t, late, "running commands are killed at shutdown")
	tmps, _ := os.ReadDir(filepath.Join(w.state, "tmp"))
	assert.Empty(t, tmps, "session tmp directories are removed")
}

// TestHTTPRebindingGuard: on a loopback bind, a web page from cordon's own
// origin, under any of its loopback names, may drive it, and a page from
// anywhere else (another site, another port on this machine) may not, nor
// a request that names cordon by a name that is not loopback (DNS
// rebinding); an origin in [http] allowed_origins is allowed too.
func TestHTTPRebindingGuard(t *testing.T) {
	w := newWorld(t)
	cfg := filepath.Join(w.base, "origins.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("[http]\nallowed_origins = [\"https://app.example\"]\n"), 0o644))
	c := newRawHTTP(t, w, "--config", cfg)
	port := c.url[strings.LastIndexByte(c.url[:len(c.url)-len("/mcp")], ':')+1 : len(c.url)-len("/mcp")]
	c.initialize(t)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, origin := range []string{"http://127.0.0.1:" + port, "http://localhost:" + port, "http://[::1]:" + port, "http://LOCALHOST:" + port, "https://app.example"} {
		r := c.do(t, http.MethodPost, ping, map[string]string{"Origin": origin})
		assert.Equal(t, http.StatusOK, r.status, "Origin %s: %s", origin, r.body)
	}
	for _, origin := range []string{"http://evil.example", "http://evil.example:" + port, "http://localhost:1", "https://127.0.0.1:" + port, "null"} {
		r := c.do(t, http.MethodPost, ping, map[string]string{"Origin": origin})
		assert.Equal(t, http.StatusForbidden, r.status, "Origin %s: %s", origin, r.body)
		assert.Contains(t, r.body, "allowed_origins", "the refusal says how to allow an origin")
		assert.Contains(t, r.body, "http://localhost:"+port, "the refusal names the origins that are allowed")
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "localhost"} {
		r := c.do(t, http.MethodPost, ping, map[string]string{"Host": host})
		assert.Equal(t, http.StatusOK, r.status, "Host %s: %s", host, r.body)
	}
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.evil.example:" + port} {
		r := c.do(t, http.MethodPost, ping, map[string]string{"Host": host})
		assert.Equal(t, http.StatusForbidden, r.status, "Host %s: %s", host, r.body)
		assert.Contains(t, r.body, "DNS rebinding")
		assert.Contains(t, r.body, "127.0.0.1", "the refusal says which names cordon answers to")
	}
	// The token comes first: without it, whatever the origin, 401.
	r := c.do(t, http.MethodPost, ping, map[string]string{"Origin": "http://evil.example", "Authorization": ""})
	assert.Equal(t, http.StatusUnauthorized, r.status)
}
