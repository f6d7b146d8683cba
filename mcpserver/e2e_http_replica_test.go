//go:build linux

package mcpserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHTTPReplica: --replica NAME prefixes every Mcp-Session-Id with
// "NAME.", the session works under it, and an id of another replica is
// unknown here.
func TestHTTPReplica(t *testing.T) {
	w := newWorld(t)
	url, token, _ := w.httpServer(t, "--replica", "east-1")
	cs := connectHTTP(t, url, token, clientOpts{version: "2025-11-25"})
	require.True(t, strings.HasPrefix(cs.ID(), "east-1."), "session id %q", cs.ID())
	res := call(t, cs, "bash", map[string]any{"command": "echo routed"})
	assert.Contains(t, text(res), "routed")

	other := "west-2." + strings.TrimPrefix(cs.ID(), "east-1.")
	for id, want := range map[string]int{other: http.StatusNotFound, cs.ID(): http.StatusOK} {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"ping"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, want, resp.StatusCode, id)
	}
}
