package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEgressNeverReachesAPortChosenAtListen: `serve --http 127.0.0.1:0`
// learns its port only once bound. A confined command under network
// restricted, with 127.0.0.1 allowed, asks the egress proxy for that port
// and is refused: it never reaches cordon's own endpoint (where a token it
// found would let it approve its own escalations).
func TestEgressNeverReachesAPortChosenAtListen(t *testing.T) {
	e := newCfgEnv(t)
	cfg := filepath.Join(e.base, "restricted.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("network = \"restricted\"\nallowed_domains = [\"127.0.0.1\"]\napproval = \"never\"\n"), 0o644))
	srv := startServe(t, e, "--http", "127.0.0.1:0", "--config", cfg, "--backend", "bwrap")
	var logged struct {
		Addr string `json:"addr"`
	}
	require.NoError(t, json.Unmarshal([]byte(srv.waitLog(t, "serving MCP over HTTP at /mcp")), &logged))
	token, err := os.ReadFile(filepath.Join(e.state, "http-token"))
	require.NoError(t, err)
	session := ""
	post := func(body string) string {
		req, err := http.NewRequest(http.MethodPost, "http://"+logged.Addr+"/mcp", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			session = id
		}
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Less(t, resp.StatusCode, 300, "%s", data)
		return string(data)
	}
	post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// Through the proxy by hand, whatever NO_PROXY says; the positive
	// control is a loopback server of the test's, which the allow list
	// opens.
	other, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer other.Close()
	go http.Serve(other, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	command := fmt.Sprintf(`for a in %s %s; do echo "code=$(curl -s -o /dev/null -w '%%{http_code}' --noproxy '' -x "$HTTP_PROXY" http://$a/mcp)"; done`,
		logged.Addr, other.Addr())
	args, err := json.Marshal(map[string]any{"command": command})
	require.NoError(t, err)
	out := post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":` + string(args) + `}}`)
	codes := regexp.MustCompile(`code=(\d+)`).FindAllStringSubmatch(out, 2) // the text; structuredContent repeats it
	require.Len(t, codes, 2, out)
	assert.Equal(t, "403", codes[0][1], "cordon's own port: %s", out)
	assert.Equal(t, "418", codes[1][1], "the positive control: %s", out)
}
