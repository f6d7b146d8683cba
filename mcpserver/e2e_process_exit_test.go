//go:build linux

package mcpserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 33, item 3: a background process killed by its session's end has
// its process/exit event in the session log, whichever way the session
// ends: the client's HTTP DELETE, or SIGTERM of the server. The event
// names the signal, and the log verifies.
func TestProcessExitLoggedHoweverTheSessionEnds(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		for _, end := range []string{"delete", "sigterm"} {
			t.Run(backend+"/"+end, func(t *testing.T) {
				w := newWorld(t)
				url, _, srv := peerServerCmd(t, w, "--backend", backend)
				// A 2025-11-25 session, which DELETE ends; under SIGTERM a
				// 2026-07-28 client's too, whose session is the token's.
				versions := []string{"2025-11-25"}
				if end == "sigterm" {
					versions = append(versions, "2026-07-28")
				}
				var clients []*mcp.ClientSession
				for _, v := range versions {
					cs := freshHTTPClientOf(t, url, v)
					res := call(t, cs, "bash", map[string]any{"command": "sleep 600", "background": true})
					require.False(t, res.IsError, text(res))
					clients = append(clients, cs)
				}
				switch end {
				case "delete":
					require.NoError(t, clients[0].Close()) // the Go SDK client sends DELETE
				case "sigterm":
					require.NoError(t, srv.Process.Signal(syscall.SIGTERM))
					done := make(chan error, 1)
					go func() { done <- srv.Wait() }()
					select {
					case <-done:
					case <-time.After(30 * time.Second):
						t.Fatal("cordon did not stop on SIGTERM")
					}
				}
				ids := sessionIDs(t, w)
				require.Len(t, ids, len(versions), "a log per session that ran a process")
				for _, id := range ids {
					var exit map[string]any
					require.Eventually(t, func() bool {
						exit = processExit(t, w, id)
						return exit != nil
					}, 30*time.Second, 100*time.Millisecond, "session %s: the killed process's process/exit event is logged", id)
					assert.Equal(t, "session-ended", exit["reason"], "%v", exit)
					assert.NotEmpty(t, exit["signal"], "a killed process's event names the signal: %v", exit)
					assert.Contains(t, cordonCLI(t, w, "log", "--verify", id), "hash chain intact")
				}
			})
		}
	}
}

// sessionIDs are the sessions whose logs hold a process/start event.
func sessionIDs(t *testing.T, w *world) []string {
	entries, err := os.ReadDir(filepath.Join(w.state, "sessions"))
	require.NoError(t, err)
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok {
			b, err := os.ReadFile(filepath.Join(w.state, "sessions", e.Name()))
			require.NoError(t, err)
			if strings.Contains(string(b), `"process/start"`) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// processExit is the data of session id's process/exit event, or nil.
func processExit(t *testing.T, w *world, id string) map[string]any {
	b, err := os.ReadFile(filepath.Join(w.state, "sessions", id+".jsonl"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		var ev struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "process/exit" {
			return ev.Data
		}
	}
	return nil
}
