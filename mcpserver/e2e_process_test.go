//go:build linux

package mcpserver_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// freePort finds a loopback port nobody listens on.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// started is what the bash call that started a background process said.
var started = map[string]string{}

func startBackground(t *testing.T, cs *mcp.ClientSession, args map[string]any) (string, *mcp.CallToolResult) {
	t.Helper()
	args["background"] = true
	res := call(t, cs, "bash", args)
	require.False(t, res.IsError, text(res))
	id, _ := structured(t, res)["process_id"].(string)
	require.NotEmpty(t, id, text(res))
	out, _ := structured(t, res)["output"].(string)
	started[fmt.Sprintf("%p/%s", cs, id)] = out
	return id, res
}

// sendInput writes to a process, and keeps what the answer brought for
// outputUntil: a quick process answers within the call itself.
func sendInput(t *testing.T, cs *mcp.ClientSession, id, in string, waitMs int) {
	t.Helper()
	res := call(t, cs, "process_input", map[string]any{"process_id": id, "input": in, "wait_ms": waitMs})
	require.False(t, res.IsError, text(res))
	out, _ := structured(t, res)["output"].(string)
	started[fmt.Sprintf("%p/%s", cs, id)] += out
}

// outputUntil reads a process's output, waiting, until want appears: what
// its start (and any input's answer) returned first, then what
// process_output brings.
func outputUntil(t *testing.T, cs *mcp.ClientSession, id, want string) string {
	t.Helper()
	var all strings.Builder
	key := fmt.Sprintf("%p/%s", cs, id)
	all.WriteString(started[key])
	delete(started, key)
	if strings.Contains(all.String(), want) {
		return all.String()
	}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		res := call(t, cs, "process_output", map[string]any{"process_id": id, "wait_ms": 2000})
		require.False(t, res.IsError, text(res))
		all.WriteString(structured(t, res)["output"].(string))
		if strings.Contains(all.String(), want) {
			return all.String()
		}
		if structured(t, res)["running"] == false {
			break
		}
	}
	t.Fatalf("%q never came from %s; got:\n%s", want, id, all.String())
	return ""
}

func processesWith(token string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(cmdline), token) && !strings.Contains(string(cmdline), "-test.") {
			pids = append(pids, pid)
		}
	}
	return pids
}

func gone(token string) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if len(processesWith(token)) == 0 {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// TestBackgroundProcesses drives process sessions through a real MCP
// client on both backends (SPEC §5, "Process sessions").
func TestBackgroundProcesses(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			// on-request: a REPL reads code the classifier never sees, so
			// ask-dangerous would ask before starting one.
			cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "workspace-write", "--backend", backend, "--approval", "on-request")

			t.Run("a dev server, reached by a second call, then killed", func(t *testing.T) {
				port := freePort(t)
				id, _ := startBackground(t, cs, map[string]any{"command": fmt.Sprintf("exec python3 -u -m http.server %d --bind 127.0.0.1", port)})
				outputUntil(t, cs, id, "Serving HTTP")
				res := call(t, cs, "bash", map[string]any{"command": fmt.Sprintf("curl -s -o /dev/null -w '%%{http_code}' http://127.0.0.1:%d/", port)})
				assert.Contains(t, text(res), "200")
				res = call(t, cs, "process_kill", map[string]any{"process_id": id})
				require.False(t, res.IsError, text(res))
				assert.NotNil(t, structured(t, res)["exit_code"])
				ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
				require.NoError(t, err, "the port is free again")
				ln.Close()
				list := call(t, cs, "process_list", map[string]any{})
				assert.Contains(t, text(list), id)
				assert.Contains(t, text(list), "killed")
			})

			t.Run("a REPL and a prompt on a terminal of their own", func(t *testing.T) {
				id, _ := startBackground(t, cs, map[string]any{"command": "python3 -i -q", "tty": true})
				outputUntil(t, cs, id, ">>>")
				res := call(t, cs, "process_input", map[string]any{"process_id": id, "input": "1+1\n", "wait_ms": 5000})
				require.False(t, res.IsError, text(res))
				got := structured(t, res)["output"].(string)
				if !strings.Contains(got, "2") {
					got += outputUntil(t, cs, id, "2")
				}
				assert.Contains(t, got, "2")
				call(t, cs, "process_input", map[string]any{"process_id": id, "input": "\u0004", "wait_ms": 2000})

				id, _ = startBackground(t, cs, map[string]any{"command": `read -p "name? " n; echo "hi $n"`, "tty": true})
				outputUntil(t, cs, id, "name? ")
				sendInput(t, cs, id, "bob\n", 0)
				outputUntil(t, cs, id, "hi bob")
			})

			t.Run("process_output waits for output, not for its timeout", func(t *testing.T) {
				id, _ := startBackground(t, cs, map[string]any{"command": "sleep 1.5; echo late", "yield_ms": 100})
				start := time.Now()
				res := call(t, cs, "process_output", map[string]any{"process_id": id, "wait_ms": 10000})
				took := time.Since(start)
				assert.Contains(t, structured(t, res)["output"], "late")
				assert.Less(t, took, 8*time.Second, "it returned when the output came, well before its 10 s")
			})

			t.Run("a kill takes the whole tree, setsid and double forks too", func(t *testing.T) {
				token := fmt.Sprintf("cordon-bg-%d", time.Now().UnixNano())
				cmd := fmt.Sprintf(`setsid -f bash -c 'sleep 300; true' %[1]s; ( (bash -c 'sleep 301; true' %[1]s &) & ); nohup bash -c 'sleep 302; true' %[1]s >/dev/null 2>&1 & echo started; sleep 300`, token)
				id, _ := startBackground(t, cs, map[string]any{"command": cmd})
				outputUntil(t, cs, id, "started")
				require.NotEmpty(t, processesWith(token))
				call(t, cs, "process_kill", map[string]any{"process_id": id, "signal": "KILL"})
				assert.True(t, gone(token), "survivors: %v", processesWith(token))
			})

			t.Run("a background write in read-only mode never lands", func(t *testing.T) {
				ro := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "read-only", "--backend", backend)
				target := filepath.Join(w.ws, "bg-write.txt")
				id, _ := startBackground(t, ro, map[string]any{"command": "sleep 0.2; echo x > " + target + "; echo tried $?"})
				outputUntil(t, ro, id, "tried")
				assert.NoFileExists(t, target)
			})

			t.Run("another HTTP session of the same server cannot see or kill it", func(t *testing.T) {
				url, _ := peerServer(t, w, "--backend", backend) // the token in the environment, as Landlock requires
				a := connectHTTP(t, url, peerToken, clientOpts{version: "2025-11-25"})
				b := connectHTTP(t, url, peerToken, clientOpts{version: "2025-11-25"})
				id, _ := startBackground(t, a, map[string]any{"command": "sleep 60"})
				for _, tool := range []string{"process_kill", "process_output"} {
					res := call(t, b, tool, map[string]any{"process_id": id})
					assert.True(t, res.IsError, tool)
					assert.Equal(t, "NOT_FOUND", errorCode(t, res), tool)
				}
				assert.NotContains(t, text(call(t, b, "process_list", map[string]any{})), "sleep 60")
				assert.Contains(t, text(call(t, a, "process_list", map[string]any{})), "sleep 60", "its own session sees it")
				call(t, a, "process_kill", map[string]any{"process_id": id, "signal": "KILL"})
			})

			t.Run("the session's end kills everything", func(t *testing.T) {
				s2 := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "workspace-write", "--backend", backend)
				token := fmt.Sprintf("cordon-session-%d", time.Now().UnixNano())
				id, _ := startBackground(t, s2, map[string]any{"command": fmt.Sprintf(`setsid -f bash -c 'sleep 300; true' %[1]s; echo up; exec bash -c 'sleep 301; true' %[1]s`, token)})
				outputUntil(t, s2, id, "up")
				require.NotEmpty(t, processesWith(token))
				require.NoError(t, s2.Close()) // stdio EOF: the session ends
				assert.True(t, gone(token), "survivors: %v", processesWith(token))
			})
		})
	}
}

// TestNarrowingKillsWiderProcesses: `cordon mode --session ID read-only`
// from another terminal ends, before the next call runs, the processes
// started in workspace-write.
func TestNarrowingKillsWiderProcesses(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) { narrowingKills(t, backend) })
	}
}

func narrowingKills(t *testing.T, backend string) {
	w := newWorld(t)
	cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "workspace-write", "--backend", backend)
	token := fmt.Sprintf("cordon-narrow-%d", time.Now().UnixNano())
	id, _ := startBackground(t, cs, map[string]any{"command": fmt.Sprintf(`echo up; exec bash -c 'while :; do echo tick >> ticks.txt; sleep 0.1; done' %s`, token)})
	outputUntil(t, cs, id, "up")
	session := sessionOf(t, w)
	out, err := exec.Command(cordonBin, "mode", "--state-dir", w.state, "--session", session, "read-only").CombinedOutput()
	require.NoError(t, err, "%s", out)
	res := call(t, cs, "process_list", map[string]any{})
	assert.Contains(t, text(res), "mode-narrowed", text(res))
	procs, _ := structured(t, res)["processes"].([]any)
	require.Len(t, procs, 1, text(res))
	assert.Equal(t, "mode-narrowed", procs[0].(map[string]any)["ended"],
		"structuredContent, which Claude Code and Codex show the model, says why too")
	assert.True(t, gone(token), "the wider process survived the narrowing")
	before := fileContent(t, filepath.Join(w.ws, "ticks.txt"))
	time.Sleep(300 * time.Millisecond)
	assert.Equal(t, before, fileContent(t, filepath.Join(w.ws, "ticks.txt")), "it stopped writing")
}

// TestNarrowingKillsWithoutACall: a background process started wider
// than the session's new mode ends by itself within a second or so of
// the narrowing, though the model makes no further call.
func TestNarrowingKillsWithoutACall(t *testing.T) {
	w := newWorld(t)
	cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "workspace-write", "--backend", "bwrap")
	token := fmt.Sprintf("cordon-narrow-idle-%d", time.Now().UnixNano())
	id, _ := startBackground(t, cs, map[string]any{"command": fmt.Sprintf(`echo up; exec bash -c 'while :; do echo tick >> idle-ticks.txt; sleep 0.1; done' %s`, token)})
	outputUntil(t, cs, id, "up")
	out, err := exec.Command(cordonBin, "mode", "--state-dir", w.state, "--session", sessionOf(t, w), "read-only").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Eventually(t, func() bool { return gone(token) }, 10*time.Second, 100*time.Millisecond, "the process ran on with no call")
	res := call(t, cs, "process_list", map[string]any{})
	procs, _ := structured(t, res)["processes"].([]any)
	require.Len(t, procs, 1, text(res))
	assert.Equal(t, "mode-narrowed", procs[0].(map[string]any)["ended"], text(res))
}

// TestProcessInputHasABound: more than a MiB in one process_input is
// refused with what to do instead, and the process runs on.
func TestProcessInputHasABound(t *testing.T) {
	w := newWorld(t)
	cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "workspace-write", "--backend", "bwrap")
	id, _ := startBackground(t, cs, map[string]any{"command": "echo up; exec cat"})
	outputUntil(t, cs, id, "up")
	res := call(t, cs, "process_input", map[string]any{"process_id": id, "input": strings.Repeat("x", 1<<20+1)})
	assert.True(t, res.IsError, text(res))
	assert.Contains(t, text(res), "write it to a file", text(res))
	sendInput(t, cs, id, "still here\n", 2000)
	assert.Contains(t, outputUntil(t, cs, id, "still here"), "still here")
	call(t, cs, "process_kill", map[string]any{"process_id": id, "signal": "KILL"})
}

// TestNarrowingKillsAForegroundCall: a foreground command in flight is
// ended by a narrowing as a background process is, before the session's
// next call runs, instead of writing on until its timeout; its own call
// says why.
func TestNarrowingKillsAForegroundCall(t *testing.T) {
	for _, c := range []struct {
		backend  string
		nextCall bool
	}{{"bwrap", true}, {"landlock", true}, {"bwrap", false}, {"landlock", false}} {
		backend, nextCall := c.backend, c.nextCall
		t.Run(fmt.Sprintf("%s/next-call=%v", backend, nextCall), func(t *testing.T) {
			w := newWorld(t)
			cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "workspace-write", "--backend", backend)
			token := fmt.Sprintf("cordon-narrow-fg-%d", time.Now().UnixNano())
			ticks := filepath.Join(w.ws, "fg-ticks.txt")
			results := make(chan *mcp.CallToolResult, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
					"command": fmt.Sprintf(`exec bash -c 'for i in $(seq 1 300); do echo tick >> fg-ticks.txt; sleep 0.1; done' %s`, token)}})
				if err != nil {
					res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
				}
				results <- res
			}()
			require.Eventually(t, func() bool { return fileContent(t, ticks) != "<absent>" }, 20*time.Second, 50*time.Millisecond)
			out, err := exec.Command(cordonBin, "mode", "--state-dir", w.state, "--session", sessionOf(t, w), "read-only").CombinedOutput()
			require.NoError(t, err, "%s", out)
			if nextCall {
				call(t, cs, "sandbox_status", map[string]any{}) // the session's next call
			} // else no call comes: the command notices by itself
			var res *mcp.CallToolResult
			select {
			case res = <-results:
			case <-time.After(10 * time.Second):
				t.Fatal("the foreground call ran on after the narrowing")
			}
			assert.True(t, res.IsError, text(res))
			assert.Contains(t, text(res), "mode-narrowed", text(res))
			assert.Equal(t, true, structured(t, res)["denied"], text(res))
			assert.True(t, gone(token), "the command survived the narrowing")
			before := fileContent(t, ticks)
			time.Sleep(300 * time.Millisecond)
			assert.Equal(t, before, fileContent(t, ticks), "it stopped writing")
		})
	}
}

// sessionOf is the id of the only session in the world's state dir.
func sessionOf(t *testing.T, w *world) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(w.state, "sessions"))
	require.NoError(t, err)
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok {
			ids = append(ids, id)
		}
	}
	require.Len(t, ids, 1, "one session expected: %v", ids)
	return ids[0]
}

// TestProcessLimits: at most processes.max live processes per session,
// and a 50 MB producer leaves the server's memory flat (the buffer keeps
// the newest output and counts what it dropped).
func TestProcessLimits(t *testing.T) {
	w := newWorld(t)
	cfg := filepath.Join(w.base, "limits.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("[processes]\nmax = 2\nmax_buffer_chars = 100000\n"), 0o644))
	cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "workspace-write", "--config", cfg)
	a, _ := startBackground(t, cs, map[string]any{"command": "sleep 60"})
	b, _ := startBackground(t, cs, map[string]any{"command": "sleep 61"})
	res := call(t, cs, "bash", map[string]any{"command": "sleep 62", "background": true})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "processes.max")
	assert.Contains(t, text(res), a)
	assert.Contains(t, text(res), b)
	call(t, cs, "process_kill", map[string]any{"process_id": a, "signal": "KILL"})

	pid := serverPID(t, w)
	before := rssKB(t, pid)
	id, _ := startBackground(t, cs, map[string]any{"command": "sleep 1.5; head -c 50000000 /dev/zero | tr '\\0' 'x' | fold -w 100; echo done"})
	deadline := time.Now().Add(60 * time.Second)
	var last map[string]any
	var dropped float64
	for time.Now().Before(deadline) {
		res := call(t, cs, "process_output", map[string]any{"process_id": id, "wait_ms": 1000})
		last = structured(t, res)
		dropped += last["dropped_chars"].(float64)
		if last["running"] == false {
			break
		}
		time.Sleep(500 * time.Millisecond) // let it overflow the buffer
	}
	require.Equal(t, false, last["running"], "the producer finished")
	after := rssKB(t, pid)
	t.Logf("server RSS %d kB before, %d kB after a 50 MB producer; %.0f characters dropped unread", before, after, dropped)
	assert.Greater(t, dropped, float64(1_000_000), "what nobody read in time was dropped, and counted")
	assert.Less(t, after-before, 40_000, "the server's memory grew by the output")
}
