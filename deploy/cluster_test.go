//go:build linux

package deploy_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The cluster tests are steps of make k8s-e2e (deploy/e2e/k8s-e2e.sh),
// which sets CORDON_E2E_GATEWAY (the gateway's MCP URL, in front of the
// StatefulSet's pods, each workspace holding replica.txt) and
// CORDON_E2E_TOKENS (alice=TOKEN,bob=TOKEN; alice pinned to cordon-0).
// Elsewhere they skip.

func clusterFleet(t *testing.T) (string, *fleet) {
	t.Helper()
	url := os.Getenv("CORDON_E2E_GATEWAY")
	if url == "" {
		t.Skip("a step of make k8s-e2e (CORDON_E2E_GATEWAY is not set)")
	}
	f := &fleet{tokens: map[string]string{}}
	for _, kv := range strings.Split(os.Getenv("CORDON_E2E_TOKENS"), ",") {
		name, tok, ok := strings.Cut(kv, "=")
		require.True(t, ok, "CORDON_E2E_TOKENS: want NAME=TOKEN,…")
		f.tokens[name] = tok
	}
	return url, f
}

// TestClusterGateway: through the gateway, every 2025-11-25 session of
// both principals sticks to its pod, and so does each 2026-07-28
// principal; alice is pinned to cordon-0.
func TestClusterGateway(t *testing.T) {
	url, f := clusterFleet(t)
	for _, p := range []string{"alice", "bob"} {
		var first string
		for s := range 4 {
			cs, err := connect(url, f.tokens[p], era2025)
			require.NoError(t, err, "%s: initialize", p)
			for i := range 3 {
				r, err := whichReplica(cs)
				require.NoError(t, err, "%s session %d call %d", p, s, i)
				if i == 0 {
					first = r
					assert.True(t, strings.HasPrefix(cs.ID(), r+"."), "session %s served by %s", cs.ID(), r)
				}
				require.Equal(t, first, r, "%s's session %s moved", p, cs.ID())
			}
			if p == "alice" {
				assert.Equal(t, "cordon-0", first, "alice is pinned")
			}
			t.Logf("%s 2025-11-25 session %s: %s", p, cs.ID(), first)
			cs.Close()
		}
	}
	served, err := drivePrincipalsOf(f, url, []string{"alice", "bob"}, 3, 2)
	require.NoError(t, err)
	assert.Equal(t, "cordon-0", served["alice"])
	t.Logf("2026-07-28 principals: %v", served)
}

// TestClusterRoll: the StatefulSet rolls with a call in flight on cordon-0
// and a background process running in the same session (CORDON_E2E_ROLL:
// waits until the call has started, restarts the StatefulSet, waits for
// cordon-0's drain to begin — /readyz 503 — and only then lets the call
// finish). The drain lets
// the call complete; the session then ends and the background process's
// process/exit closes its log (the script checks the log).
func TestClusterRoll(t *testing.T) {
	url, f := clusterFleet(t)
	roll := os.Getenv("CORDON_E2E_ROLL")
	require.NotEmpty(t, roll, "CORDON_E2E_ROLL: the command that deletes cordon-0")
	cs, err := connect(url, f.tokens["alice"], era2025)
	require.NoError(t, err)
	defer cs.Close()
	r, err := whichReplica(cs)
	require.NoError(t, err)
	require.Equal(t, "cordon-0", r)
	t.Logf("session %s on %s", cs.ID(), r)

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	bg, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash",
		Arguments: map[string]any{"command": "echo roll-background; exec sleep 600", "background": true}})
	require.NoError(t, err)
	require.False(t, bg.IsError, "background process: %s", toolText(bg))
	t.Logf("background process started: %s", toolText(bg))

	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		// Runs until the roll command has seen the drain begin.
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash",
			Arguments: map[string]any{"command": "touch roll-started; until [ -e drain-began ]; do sleep 0.2; done; echo finished after the drain began",
				"timeout_ms": 300000}})
		done <- outcome{res, err}
	}()
	out, err := exec.Command("sh", "-c", roll).CombinedOutput()
	t.Logf("roll: %s", out)
	require.NoError(t, err, "the roll command")
	o := <-done
	require.NoError(t, o.err, "the call in flight was cut by the roll")
	assert.False(t, o.res.IsError, "the call in flight: %s", toolText(o.res))
	assert.Contains(t, toolText(o.res), "finished after the drain began")
	t.Logf("the call in flight completed during the drain: %q", toolText(o.res))
}

func toolText(res *mcp.CallToolResult) string {
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "\n")
}
