//go:build linux

package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// handOverConfig writes a config whose bash timeout is short, so that a
// test need not wait the default two minutes.
func handOverConfig(t *testing.T, extra string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("bash.timeout = \"2s\"\n"+extra), 0o644))
	return cfg
}

// TestLongForegroundGoesOnInTheBackground: a foreground command without
// timeout_ms that outruns the default limit is not killed: the call
// returns its output so far with a process_id and running: true, and
// process_output later shows how it ended, on both backends. Progress
// notifications carry the last line written. An explicit timeout_ms
// still kills.
func TestLongForegroundGoesOnInTheBackground(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			var mu sync.Mutex
			var progress []string
			cs := w.stdio(t, clientOpts{version: "2025-11-25", progress: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				progress = append(progress, req.Params.Message)
				mu.Unlock()
			}}, "--config", handOverConfig(t, ""), "--backend", backend)
			marker := filepath.Join(w.ws, "built")
			p := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
				"command": "echo compiling; sleep 5; echo done; touch " + marker}}
			p.SetProgressToken("tok")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, p)
			require.NoError(t, err)
			require.False(t, res.IsError, text(res))
			st := structured(t, res)
			assert.Equal(t, true, st["running"])
			id, _ := st["process_id"].(string)
			require.NotEmpty(t, id, text(res))
			assert.Contains(t, text(res), "compiling\n[still running after 2s: it goes on as background process "+id+"; process_output waits for more")
			assert.Contains(t, st["notes"], "[still running after 2s: it goes on as background process "+id+"; process_output waits for more and tells how it ends, process_kill ends it]", "structuredContent says it too")
			mu.Lock()
			assert.Contains(t, strings.Join(progress, "\n"), ": compiling", "progress carries the last line")
			mu.Unlock()

			var out strings.Builder
			deadline := time.Now().Add(45 * time.Second)
			for time.Now().Before(deadline) {
				res = call(t, cs, "process_output", map[string]any{"process_id": id, "wait_ms": 5000})
				out.WriteString(text(res))
				if structured(t, res)["running"] == false {
					break
				}
			}
			assert.Contains(t, out.String(), "done\n")
			assert.Contains(t, out.String(), "[process "+id+" exited 0]")
			assert.FileExists(t, marker, "the build finished")
		})
	}
}

// TestLongForegroundAtTheProcessLimit: a session that may start no more
// processes kills the command at the limit, as before, and says why.
func TestLongForegroundAtTheProcessLimit(t *testing.T) {
	w := newWorld(t)
	cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--config", handOverConfig(t, "processes.max = 1\n"))
	res := call(t, cs, "bash", map[string]any{"command": "sleep 60", "background": true})
	require.False(t, res.IsError, text(res))
	res = call(t, cs, "bash", map[string]any{"command": "echo begun; sleep 30"})
	assert.True(t, res.IsError)
	assert.Equal(t, "TIMEOUT", errorCode(t, res))
	assert.Contains(t, text(res), "timed out after 2s and could not go on in the background (this session already runs 1 background processes, the most it may (processes.max)")

	res = call(t, cs, "bash", map[string]any{"command": "sleep 30", "timeout_ms": 1000})
	assert.Equal(t, "TIMEOUT", errorCode(t, res), "an explicit timeout_ms kills")
}

// TestEscalatedForegroundIsNotHandedOver: an approved wider call that
// outruns the limit is killed as before, not left running unconfined as a
// background process the question never mentioned.
func TestEscalatedForegroundIsNotHandedOver(t *testing.T) {
	w := newWorld(t)
	h := &human{action: "accept", decision: "allow_once"}
	cs := w.stdio(t, clientOpts{version: "2025-11-25", elicit: h.handle}, "--config", handOverConfig(t, ""), "--approval", "on-request")
	canary := filepath.Join(w.outside, "late")
	res := call(t, cs, "bash", escalate("sleep 6; touch "+canary, "danger-full-access"))
	assert.EqualValues(t, 1, h.asked.Load())
	assert.True(t, res.IsError, text(res))
	assert.Equal(t, "TIMEOUT", errorCode(t, res))
	assert.Nil(t, structured(t, res)["process_id"], "no process runs on")
	time.Sleep(7 * time.Second)
	assert.NoFileExists(t, canary, "the approved command ended with its call")
}

// TestHandedOverCommandAsksNoOne: once a foreground command goes on in the
// background, a new host it connects to is decided by the lists alone, as
// for any background process: no question reaches the human without a
// call behind it, and nothing gets through.
func TestHandedOverCommandAsksNoOne(t *testing.T) {
	host, hits := outsideServer(t)
	w := newWorld(t)
	h := &human{action: "accept", decision: "allow_session"}
	cs := w.stdio(t, clientOpts{version: "2025-11-25", elicit: h.handle}, "--config", handOverConfig(t, ""), "--network", "restricted")
	res := call(t, cs, "bash", map[string]any{"command": "sleep 4; curl -sS -m 10 http://" + host + "/; echo curl-done"})
	require.False(t, res.IsError, text(res))
	id, _ := structured(t, res)["process_id"].(string)
	require.NotEmpty(t, id, text(res))
	var out strings.Builder
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		res = call(t, cs, "process_output", map[string]any{"process_id": id, "wait_ms": 5000})
		out.WriteString(text(res))
		if structured(t, res)["running"] == false {
			break
		}
	}
	assert.Contains(t, out.String(), "curl-done")
	assert.EqualValues(t, 0, h.asked.Load(), "no question without a call")
	assert.EqualValues(t, 0, hits.Load(), "the host is not in allowed_domains")
}
