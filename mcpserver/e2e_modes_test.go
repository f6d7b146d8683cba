//go:build linux

package mcpserver_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One call, one mode; delegation on both transports (SPEC §6). Each test
// judges by the host: whether the command's process still runs, whether
// the workspace holds what it wrote.

// narrowingHuman narrows the session from another terminal while the
// question is open, then answers it.
type narrowingHuman struct {
	t        *testing.T
	w        *world
	session  string
	decision string
	asked    int
}

func (h *narrowingHuman) handle(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	h.asked++
	out, err := exec.Command(cordonBin, "mode", "--state-dir", h.w.state, "--session", h.session, "read-only").CombinedOutput()
	if err != nil {
		h.t.Errorf("cordon mode: %v: %s", err, out)
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": h.decision}}, nil
}

// tickCommand writes to the workspace every 100 ms until killed; token
// finds it on the host.
func tickCommand(file, token string) string {
	return fmt.Sprintf(`echo up; exec bash -c 'while :; do echo tick >> %s; sleep 0.1; done' %s`, file, token)
}

// TestNarrowedWhileAskedNeverRunsWider: a background call whose question
// is open while the human narrows the session to read-only does not run
// wider than the session: on the answer, nothing starts, and nothing
// writes the workspace. On today's main the process was recorded under
// the session's new mode and never ended.
func TestNarrowedWhileAskedNeverRunsWider(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		esc  map[string]any
	}{
		// --approval always asks about the call itself: it would run
		// under the workspace-write the call read.
		{"approval-always", []string{"--mode", "workspace-write", "--approval", "always"}, nil},
		// an escalation for this call alone from a session that then
		// narrows below where it was.
		{"allow-once", []string{"--mode", "workspace-write"}, map[string]any{"sandbox_permissions": "danger-full-access", "justification": "the build writes outside"}},
	} {
		for _, run := range []struct{ backend, version string }{
			{"bwrap", "2025-11-25"}, {"landlock", "2025-11-25"},
			// A 2026-07-28 client answers in a second request, which
			// reads the mode again: the answer is to the question asked.
			{"bwrap", "2026-07-28"},
		} {
			backend := run.backend
			t.Run(c.name+"/"+backend+"/"+run.version, func(t *testing.T) {
				w := newWorld(t)
				h := &narrowingHuman{t: t, w: w, decision: "allow_once"}
				cs := w.stdio(t, clientOpts{version: run.version, elicit: h.handle}, append(c.args, "--backend", backend)...)
				h.session = sessionOf(t, w)
				token := fmt.Sprintf("cordon-asked-%d", time.Now().UnixNano())
				ticks := filepath.Join(w.ws, "asked-ticks.txt")
				args := map[string]any{"command": tickCommand(ticks, token), "background": true}
				for k, v := range c.esc {
					args[k] = v
				}
				res := call(t, cs, "bash", args)
				require.Equal(t, 1, h.asked, text(res))
				assert.True(t, res.IsError, "the call ran though the session narrowed while it was asked: %s", text(res))
				assert.Regexp(t, `narrowed to read-only while the question was open|mode changed while the question was open`, text(res))
				assert.True(t, gone(token), "the process runs on wider than the session: %v", processesWith(token))
				list := call(t, cs, "process_list", map[string]any{})
				for _, p := range structuredList(t, list) {
					assert.NotEqual(t, true, p["running"], "a process runs: %s", text(list))
				}
				assert.Equal(t, "<absent>", fileContent(t, ticks), "the workspace was written")
				// The session is read-only now, as the human set it.
				st := structured(t, call(t, cs, "sandbox_status", nil))
				assert.Equal(t, "read-only", st["mode"])
			})
		}
	}
}

func structuredList(t *testing.T, res *mcp.CallToolResult) []map[string]any {
	t.Helper()
	procs, _ := structured(t, res)["processes"].([]any)
	var out []map[string]any
	for _, p := range procs {
		out = append(out, p.(map[string]any))
	}
	return out
}

// subAgent is how a test reaches a sub-agent's server.
type subAgent struct {
	name    string
	connect func(t *testing.T, w *world, extra ...string) *mcp.ClientSession
}

var subAgents = []subAgent{
	{"stdio", func(t *testing.T, w *world, extra ...string) *mcp.ClientSession {
		return w.stdio(t, clientOpts{version: "2025-11-25"}, extra...)
	}},
	// Over HTTP every session the server serves is delegated: a protocol
	// session (2025-11-25) and a 2026-07-28 client's alike.
	{"http", func(t *testing.T, w *world, extra ...string) *mcp.ClientSession {
		url, token, _ := w.httpServer(t, extra...)
		return connectHTTP(t, url, token, clientOpts{version: "2025-11-25"})
	}},
	{"http-2026", func(t *testing.T, w *world, extra ...string) *mcp.ClientSession {
		url, token, _ := w.httpServer(t, extra...)
		return connectHTTP(t, url, token, clientOpts{version: "2026-07-28"})
	}},
}

// parentSession starts a parent agent's session in mode and returns its
// id.
func parentSession(t *testing.T, w *world, mode string) string {
	t.Helper()
	parent := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", mode)
	call(t, parent, "sandbox_status", nil)
	ids := listSessions(t, w)
	require.Len(t, ids, 1)
	return ids[0]
}

// TestDelegatedSubAgentOfReadOnlyParent: the sub-agent of a read-only
// parent cannot write the workspace, whatever its own --mode, on either
// transport. Over HTTP, --delegated-from used to be ignored without a word.
func TestDelegatedSubAgentOfReadOnlyParent(t *testing.T) {
	for _, sa := range subAgents {
		t.Run(sa.name, func(t *testing.T) {
			w := newWorld(t)
			parentID := parentSession(t, w, "read-only")
			child := sa.connect(t, w, "--mode", "workspace-write", "--delegated-from", parentID)
			st := structured(t, call(t, child, "sandbox_status", nil))
			assert.Equal(t, "read-only", st["mode"], "a delegated session runs at its parent's mode")
			f := filepath.Join(w.ws, "sub-agent.txt")
			res := call(t, child, "bash", map[string]any{"command": writeCmd(f)})
			assert.True(t, res.IsError, text(res))
			res = call(t, child, "write_file", map[string]any{"path": filepath.Join(w.ws, "sub-agent-2.txt"), "content": "x"})
			assert.True(t, res.IsError, text(res))
			assert.NoFileExists(t, f)
			assert.NoFileExists(t, filepath.Join(w.ws, "sub-agent-2.txt"))
		})
	}
}

// TestNarrowingTheParentEndsTheSubAgentsWiderProcess: the parent's mode is
// read at every call of the sub-agent, not copied once: narrowing the
// parent after the sub-agent started a workspace-write background process
// ends it (mode-narrowed), with no call of the sub-agent needed, and the
// sub-agent's next write is refused.
func TestNarrowingTheParentEndsTheSubAgentsWiderProcess(t *testing.T) {
	for _, sa := range subAgents {
		t.Run(sa.name, func(t *testing.T) {
			w := newWorld(t)
			parentID := parentSession(t, w, "workspace-write")
			child := sa.connect(t, w, "--mode", "workspace-write", "--delegated-from", parentID)
			token := fmt.Sprintf("cordon-subagent-%d", time.Now().UnixNano())
			ticks := filepath.Join(w.ws, "sub-ticks.txt")
			id, _ := startBackground(t, child, map[string]any{"command": tickCommand(ticks, token)})
			outputUntil(t, child, id, "up")
			require.Eventually(t, func() bool { return fileContent(t, ticks) != "<absent>" }, 20*time.Second, 50*time.Millisecond,
				"the sub-agent's process writes the workspace while its parent is workspace-write")

			cordonCLI(t, w, "mode", "--session", parentID, "read-only")
			require.Eventually(t, func() bool { return gone(token) }, 20*time.Second, 100*time.Millisecond,
				"the sub-agent's workspace-write process outlived its parent's narrowing: %v", processesWith(token))
			before := fileContent(t, ticks)
			list := call(t, child, "process_list", map[string]any{})
			procs := structuredList(t, list)
			require.Len(t, procs, 1, text(list))
			assert.Equal(t, "mode-narrowed", procs[0]["ended"], text(list))
			f := filepath.Join(w.ws, "after.txt")
			res := call(t, child, "bash", map[string]any{"command": writeCmd(f)})
			assert.True(t, res.IsError, text(res))
			assert.NoFileExists(t, f)
			assert.Equal(t, before, fileContent(t, ticks), "it stopped writing")
		})
	}
}
