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
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("cordon did not shut down on SIGTERM")
	}
	time.Sleep(2500 * time.Millisecond)
	assert.NoFileExists(t, late, "running commands are killed at shutdown")
	tmps, _ := os.ReadDir(filepath.Join(w.state, "tmp"))
	assert.Empty(t, tmps, "session tmp directories are removed")
}
