//go:build linux

package mcpserver_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// These tests drive the real cordon binary through the official MCP Go SDK
// client (not mcp-go's own), over stdio and Streamable HTTP.

var cordonBin string

func TestMain(m *testing.M) {
	if bin := os.Getenv("CORDON_E2E_BIN"); bin != "" { // a re-run as another user (e2e_http_peer_nonroot_test.go)
		cordonBin = bin
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("/var/tmp", "cordon-e2e-bin-")
	if err != nil {
		panic(err)
	}
	os.Chmod(dir, 0o755)
	cordonBin = filepath.Join(dir, "cordon")
	// Built as `make build` builds it, with the lean helper beside it, so
	// that benchmarks measure what users run.
	build := exec.Command("go", "build", "-trimpath", "-o", dir+"/", "../cmd/cordon", "../cmd/cordon-helper")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		panic("building cordon: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// world is one user's machine in miniature: a workspace, something outside
// it, a home with a credential canary, and cordon's state dir; all under
// /var/tmp so they stay visible inside bwrap.
type world struct {
	base, ws, outside, home, state string
	outsideFile, secret            string
}

func newWorld(t testing.TB) *world {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "cordon-e2e-")
	require.NoError(t, err)
	os.Chmod(base, 0o755)
	t.Cleanup(func() { os.RemoveAll(base) })
	w := &world{base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"),
		home: filepath.Join(base, "home"), state: filepath.Join(base, "home", ".local", "state", "cordon")}
	for _, d := range []string{w.ws, w.outside, filepath.Join(w.home, ".ssh")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	w.outsideFile = filepath.Join(w.outside, "file.txt")
	w.secret = filepath.Join(w.home, ".ssh", "id_canary")
	require.NoError(t, os.WriteFile(w.outsideFile, []byte("outside\n"), 0o644))
	require.NoError(t, os.WriteFile(w.secret, []byte("SECRET-CANARY\n"), 0o600))
	return w
}

// env is cordon's environment: the fake home, plus secrets that must never
// reach a confined command.
func (w *world) env() []string {
	return append(os.Environ(), "HOME="+w.home, "XDG_STATE_HOME=", "XDG_CONFIG_HOME=", "XDG_CACHE_HOME="+filepath.Join(w.base, "cache"),
		"AWS_SECRET_ACCESS_KEY=aws-secret-canary", "GITHUB_TOKEN=gh-token-canary", "OPENAI_API_KEY=openai-canary")
}

func (w *world) serveArgs(extra ...string) []string {
	return append([]string{"serve", "--workspace", w.ws, "--state-dir", w.state, "--log-level", "debug"}, extra...)
}

type clientOpts struct {
	version  string
	roots    []string // file paths the client declares as its roots
	progress func(context.Context, *mcp.ProgressNotificationClientRequest)
	elicit   func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	noMRTR   bool
	name     string // clientInfo.name; cordon-e2e by default
	logs     func(context.Context, *mcp.LoggingMessageRequest)
}

func newClient(o clientOpts) *mcp.Client {
	opts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	if o.elicit != nil {
		opts.ElicitationHandler = o.elicit
		opts.Capabilities = nil
	}
	if o.progress != nil {
		opts.ProgressNotificationHandler = o.progress
	}
	if o.logs != nil {
		opts.LoggingMessageHandler = o.logs
	}
	if o.noMRTR {
		opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	if o.roots != nil {
		opts.Capabilities = nil // the default declares roots
	}
	name := "cordon-e2e"
	if o.name != "" {
		name = o.name
	}
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, opts)
	for _, r := range o.roots {
		c.AddRoots(&mcp.Root{URI: "file://" + r})
	}
	return c
}

// stdio starts `cordon serve` and connects to it.
func (w *world) stdio(t testing.TB, o clientOpts, extra ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(cordonBin, w.serveArgs(extra...)...)
	cmd.Env = w.env()
	cmd.Stderr = &testLogWriter{t: t}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := newClient(o).Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: o.version})
	require.NoError(t, err)
	if o.version != "" {
		require.Equal(t, o.version, cs.InitializeResult().ProtocolVersion, "negotiated protocol revision")
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// httpServer starts `cordon serve --http` and returns its URL and token.
func (w *world) httpServer(t testing.TB, extra ...string) (url, token string, cmd *exec.Cmd) {
	t.Helper()
	cmd = exec.Command(cordonBin, w.serveArgs(append([]string{"--http", "127.0.0.1:0"}, extra...)...)...)
	cmd.Env = w.env()
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			t.Log("cordon: " + line)
			if i := strings.Index(line, `"addr":"`); i >= 0 && !sent {
				rest := line[i+len(`"addr":"`):]
				addr <- rest[:strings.IndexByte(rest, '"')]
				sent = true
			}
		}
	}()
	select {
	case a := <-addr:
		url = "http://" + a + "/mcp"
	case <-time.After(20 * time.Second):
		t.Fatal("cordon serve --http did not start")
	}
	tok, err := os.ReadFile(filepath.Join(w.state, "http-token"))
	require.NoError(t, err)
	return url, strings.TrimSpace(string(tok)), cmd
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func connectHTTP(t *testing.T, url, token string, o clientOpts) *mcp.ClientSession {
	t.Helper()
	cs, err := tryConnectHTTP(url, token, o)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

func tryConnectHTTP(url, token string, o clientOpts) (*mcp.ClientSession, error) {
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return newClient(o).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: o.version})
}

func tryCall(cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

type testLogWriter struct{ t testing.TB }

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.t.Log("cordon: " + strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	return res
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	m, ok := res.StructuredContent.(map[string]any)
	require.True(t, ok, "structuredContent is %T", res.StructuredContent)
	return m
}

func errorCode(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	e, _ := structured(t, res)["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func fileContent(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "<absent>"
	}
	require.NoError(t, err)
	return string(b)
}

var _ = fmt.Sprint

func mcpCall(name string, args map[string]any) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: name, Arguments: args}
}
