//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stdioServer is `cordon serve` over stdio, spoken to in raw JSON-RPC.
type stdioServer struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	mu     sync.Mutex
	logs   []string
	logged chan struct{}
	nextID int
}

func startServe(t *testing.T, e *cfgEnv, args ...string) *stdioServer {
	t.Helper()
	cmd := exec.Command(cordonBin, append([]string{"serve", "--state-dir", e.state, "--log-level", "debug"}, args...)...)
	cmd.Dir, cmd.Env = e.ws, append(os.Environ(), e.env()...)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	errPipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	s := &stdioServer{cmd: cmd, in: in, out: bufio.NewScanner(out), logged: make(chan struct{}, 1), nextID: 1}
	s.out.Buffer(make([]byte, 1<<20), 16<<20)
	go func() {
		sc := bufio.NewScanner(errPipe)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.logs = append(s.logs, sc.Text())
			s.mu.Unlock()
			select {
			case s.logged <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("cordon serve's log:\n%s", strings.Join(s.logLines(), "\n"))
		}
	})
	return s
}

func (s *stdioServer) logLines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.logs...)
}

// waitLog waits for a log line containing every one of parts.
func (s *stdioServer) waitLog(t *testing.T, parts ...string) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		for _, l := range s.logLines() {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(l, p)
			}
			if ok {
				return l
			}
		}
		select {
		case <-s.logged:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no log line with %q", parts)
		}
	}
}

// call sends a request and returns its result, skipping notifications.
func (s *stdioServer) call(t *testing.T, method string, params any) map[string]any {
	t.Helper()
	s.nextID++
	id := s.nextID
	s.send(t, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	for s.out.Scan() {
		var msg map[string]any
		require.NoError(t, json.Unmarshal(s.out.Bytes(), &msg), s.out.Text())
		if msg["id"] == float64(id) {
			require.Nil(t, msg["error"], s.out.Text())
			return msg["result"].(map[string]any)
		}
	}
	t.Fatalf("cordon closed stdout: %v", s.out.Err())
	return nil
}

func (s *stdioServer) send(t *testing.T, msg map[string]any) {
	t.Helper()
	b, err := json.Marshal(msg)
	require.NoError(t, err)
	_, err = s.in.Write(append(b, '\n'))
	require.NoError(t, err)
}

func (s *stdioServer) initialize(t *testing.T) {
	s.call(t, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "reload-test", "version": "1"}})
	s.send(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
}

func (s *stdioServer) sandboxStatus(t *testing.T) map[string]any {
	t.Helper()
	res := s.call(t, "tools/call", map[string]any{"name": "sandbox_status", "arguments": map[string]any{}})
	return res["structuredContent"].(map[string]any)
}

func TestServeReloadsOnSIGHUP(t *testing.T) {
	e := newCfgEnv(t)
	e.write(t, e.userFile(), "mode = \"workspace-write\"\n")
	srv := startServe(t, e)
	srv.waitLog(t, "serving MCP on stdio")
	srv.initialize(t)
	st := srv.sandboxStatus(t)
	assert.Equal(t, "workspace-write", st["mode"])
	assert.Equal(t, "allow", st["network"])

	e.write(t, e.userFile(), "mode = \"read-only\"\nnetwork = \"deny\"\n")
	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGHUP))
	line := srv.waitLog(t, "SIGHUP: config reloaded")
	assert.Contains(t, line, "mode: workspace-write → read-only")
	assert.Contains(t, line, "network: allow → deny")
	st = srv.sandboxStatus(t)
	assert.Equal(t, "read-only", st["mode"], "the reloaded mode applies from the next call")
	assert.Equal(t, "deny", st["network"])
	assert.Equal(t, "safe", st["preset"])

	// A bad file on reload is logged and ignored: the server keeps its
	// configuration and keeps serving.
	e.write(t, e.userFile(), "mode = 5\n")
	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGHUP))
	line = srv.waitLog(t, "SIGHUP: not reloaded")
	assert.Contains(t, line, fmt.Sprintf("%s:1: mode: must be a string", e.userFile()))
	st = srv.sandboxStatus(t)
	assert.Equal(t, "read-only", st["mode"])

	// Flags still outrank the files on reload; what cannot change live is
	// said so.
	e.write(t, e.userFile(), "mode = \"danger-full-access\"\napproval_timeout = \"1m\"\n")
	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGHUP))
	srv.waitLog(t, "SIGHUP: config reloaded", "mode: read-only → danger-full-access")
	srv.waitLog(t, "SIGHUP: approval_timeout: 5m0s → 1m0s not applied")
	assert.Equal(t, "danger-full-access", srv.sandboxStatus(t)["mode"])
}

func TestServeReloadKeepsFlags(t *testing.T) {
	e := newCfgEnv(t)
	srv := startServe(t, e, "--mode", "read-only")
	srv.waitLog(t, "serving MCP on stdio")
	srv.initialize(t)
	e.write(t, e.userFile(), "mode = \"danger-full-access\"\nnetwork = \"deny\"\n")
	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGHUP))
	line := srv.waitLog(t, "SIGHUP: config reloaded")
	assert.NotContains(t, line, "mode:", "--mode outranks the file on reload too")
	st := srv.sandboxStatus(t)
	assert.Equal(t, "read-only", st["mode"])
	assert.Equal(t, "deny", st["network"])
}

// TestServeHTTPFromConfig: --http config serves at [http] addr, and the
// config's allowed_origins reach the Origin guard.
func TestServeHTTPFromConfig(t *testing.T) {
	e := newCfgEnv(t)
	r := e.run(t, nil, "serve", "--http", "config")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "--http config: no config file sets [http] addr")

	e.write(t, e.userFile(), "[http]\naddr = \"127.0.0.1:0\"\nallowed_origins = [\"http://allowed.example\"]\n")
	srv := startServe(t, e, "--http", "config")
	line := srv.waitLog(t, "serving MCP over HTTP at /mcp")
	var logged struct {
		Addr      string `json:"addr"`
		TokenFile string `json:"token_file"`
	}
	require.NoError(t, json.Unmarshal([]byte(line), &logged))
	token, err := os.ReadFile(logged.TokenFile)
	require.NoError(t, err)
	post := func(origin string) int {
		req, err := http.NewRequest("POST", "http://"+logged.Addr+"/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusForbidden, post("http://evil.example"))
	assert.Equal(t, http.StatusOK, post("http://allowed.example"))
	srv.cmd.Process.Signal(syscall.SIGTERM)
}

// TestServeReloadKeepsTheTokenHidden: over HTTP with a generated token, a
// reload must not switch to a backend that cannot hide the token file
// (Landlock) — the start-up refuses that, and so does SIGHUP.
func TestServeReloadKeepsTheTokenHidden(t *testing.T) {
	e := newCfgEnv(t)
	e.write(t, e.userFile(), "backend = \"bwrap\"\n")
	srv := startServe(t, e, "--http", "127.0.0.1:0")
	srv.waitLog(t, "serving MCP over HTTP")
	srv.waitLog(t, "sandbox active", "bwrap")

	e.write(t, e.userFile(), "backend = \"landlock\"\n")
	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGHUP))
	line := srv.waitLog(t, "SIGHUP: not reloaded", "cannot hide the HTTP token file")
	assert.Contains(t, line, "landlock")
	for _, l := range srv.logLines() {
		assert.NotContains(t, l, "SIGHUP: config reloaded")
	}
}
