//go:build linux

package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// human answers elicitations and counts them.
type human struct {
	asked    atomic.Int32
	action   string
	decision string
	delay    time.Duration
	lastMsg  atomic.Value
}

func (h *human) handle(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	h.asked.Add(1)
	h.lastMsg.Store(req.Params.Message)
	if h.delay > 0 {
		select {
		case <-time.After(h.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	res := &mcp.ElicitResult{Action: h.action}
	if h.action == "accept" {
		res.Content = map[string]any{"decision": h.decision}
	}
	return res, nil
}

func writeCmd(path string) string { return fmt.Sprintf("echo written > %s", path) }

func escalate(cmd, target string) map[string]any {
	return map[string]any{"command": cmd, "sandbox_permissions": target, "justification": "the build needs to write its output"}
}

func TestEscalationAllowOnce(t *testing.T) {
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			w := newWorld(t)
			h := &human{action: "accept", decision: "allow_once"}
			cs := w.stdio(t, clientOpts{version: v, elicit: h.handle}, "--mode", "read-only")
			f := filepath.Join(w.ws, "once.txt")
			res := call(t, cs, "bash", escalate(writeCmd(f), "workspace-write"))
			assert.False(t, res.IsError, text(res))
			assert.Equal(t, "written\n", fileContent(t, f))
			assert.EqualValues(t, 1, h.asked.Load())
			msg := h.lastMsg.Load().(string)
			assert.Contains(t, msg, "bash")
			assert.Contains(t, msg, "workspace-write")
			assert.Contains(t, msg, "the build needs to write its output")
			assert.Contains(t, msg, f)

			g := filepath.Join(w.ws, "again.txt")
			res = call(t, cs, "bash", map[string]any{"command": writeCmd(g)})
			assert.True(t, res.IsError, "allow_once grants nothing beyond the one call")
			assert.True(t, strings.HasPrefix(text(res), "[sandbox: file access denied under read-only mode]"))
			assert.NoFileExists(t, g)
		})
	}
}

func TestEscalationAllowSession(t *testing.T) {
	w := newWorld(t)
	h := &human{action: "accept", decision: "allow_session"}
	cs := w.stdio(t, clientOpts{version: "2025-11-25", elicit: h.handle}, "--mode", "read-only")
	st := structured(t, call(t, cs, "sandbox_status", nil))
	_ = st
	res := call(t, cs, "bash", escalate(writeCmd(filepath.Join(w.ws, "a")), "workspace-write"))
	require.False(t, res.IsError, text(res))
	res = call(t, cs, "bash", map[string]any{"command": writeCmd(filepath.Join(w.ws, "b"))})
	assert.False(t, res.IsError, "later calls of the session write: %s", text(res))
	assert.FileExists(t, filepath.Join(w.ws, "b"))
	assert.EqualValues(t, 1, h.asked.Load())

	sessions := listSessions(t, w)
	require.Len(t, sessions, 1)
	id := sessions[0]
	logText := cordonCLI(t, w, "log", "--json", id)
	assert.Contains(t, logText, `"type":"sandbox/mode","data":{"mode":"workspace-write","source":"escalation"}`)
	assert.Contains(t, logText, `"type":"approval/outcome"`)

	// A second session is unaffected.
	other := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "read-only")
	res = call(t, other, "bash", map[string]any{"command": writeCmd(filepath.Join(w.ws, "c"))})
	assert.True(t, res.IsError)
	assert.NoFileExists(t, filepath.Join(w.ws, "c"))

	// After a restart with --session the mode is still in force.
	cs.Close()
	waitEnded(t, w, id)
	resumed := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "read-only", "--session", id)
	res = call(t, resumed, "bash", map[string]any{"command": writeCmd(filepath.Join(w.ws, "d"))})
	assert.False(t, res.IsError, text(res))
	assert.FileExists(t, filepath.Join(w.ws, "d"))
	assert.Contains(t, cordonCLI(t, w, "log", "--verify", id), "hash chain intact")
}

func TestEscalationRefused(t *testing.T) {
	cases := []struct {
		name string
		h    *human
		args []string
		want string
	}{
		{"deny", &human{action: "accept", decision: "deny"}, nil, "escalation to workspace-write was not approved"},
		{"decline", &human{action: "decline"}, nil, "escalation to workspace-write was not approved"},
		{"cancel", &human{action: "cancel"}, nil, "escalation to workspace-write was not approved"},
		{"timeout", &human{action: "accept", decision: "allow_once", delay: 10 * time.Second}, []string{"--approval-timeout", "1s"}, "no answer within 1s"},
	}
	for _, c := range cases {
		for _, v := range []string{"2025-11-25", "2026-07-28"} {
			if c.name == "timeout" && v == "2026-07-28" {
				continue // the client holds the question; expiry is tested with a raw retry
			}
			t.Run(c.name+"/"+v, func(t *testing.T) {
				h := &human{action: c.h.action, decision: c.h.decision, delay: c.h.delay}
				w := newWorld(t)
				cs := w.stdio(t, clientOpts{version: v, elicit: h.handle}, append([]string{"--mode", "read-only"}, c.args...)...)
				f := filepath.Join(w.ws, "nope.txt")
				res := call(t, cs, "bash", escalate(writeCmd(f), "workspace-write"))
				assert.True(t, res.IsError)
				assert.True(t, strings.HasPrefix(text(res), "[sandbox: file access denied under read-only mode]"), text(res))
				assert.Contains(t, text(res), c.want)
				assert.Equal(t, "ESCALATION_DENIED", errorCode(t, res))
				assert.NoFileExists(t, f)
				assert.EqualValues(t, 1, h.asked.Load(), "asked once, never a retry loop")
				id := listSessions(t, w)[0]
				assert.Contains(t, cordonCLI(t, w, "log", "--json", id), `"type":"approval/outcome","data":{"decision":"deny"`)
			})
		}
	}
}

func TestEscalationWithoutElicitation(t *testing.T) {
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			w := newWorld(t)
			cs := w.stdio(t, clientOpts{version: v}, "--mode", "read-only")
			f := filepath.Join(w.ws, "nope.txt")
			res := call(t, cs, "bash", escalate(writeCmd(f), "workspace-write"))
			assert.True(t, res.IsError)
			assert.Equal(t, "ESCALATION_NO_APPROVER", errorCode(t, res))
			assert.Contains(t, text(res), "--mode workspace-write")
			assert.Contains(t, text(res), "cordon mode --session")
			assert.NoFileExists(t, f)
		})
	}
}

func TestEscalationValidatedBeforeAsking(t *testing.T) {
	w := newWorld(t)
	h := &human{action: "accept", decision: "allow_once"}
	cs := w.stdio(t, clientOpts{version: "2025-11-25", elicit: h.handle}, "--mode", "workspace-write")
	f := filepath.Join(w.ws, "x")
	cases := []map[string]any{
		{"command": writeCmd(f), "justification": "because"},
		{"command": writeCmd(f), "sandbox_permissions": "danger-full-access"},
		{"command": writeCmd(f), "sandbox_permissions": "danger-full-access", "justification": "   "},
		{"command": writeCmd(f), "sandbox_permissions": "read-only", "justification": "because"},
		{"command": writeCmd(f), "sandbox_permissions": "workspace-write", "justification": "because"},
		{"command": writeCmd(f), "sandbox_permissions": "root", "justification": "because"},
	}
	for _, args := range cases {
		res := call(t, cs, "bash", args)
		assert.True(t, res.IsError, "%v", args)
		assert.Equal(t, "INVALID_ARGUMENT", errorCode(t, res), "%v: %s", args, text(res))
	}
	assert.Zero(t, h.asked.Load(), "the human was never asked")
	assert.NoFileExists(t, f)
}

// TestEscalationQuestionShownWhole: the review's hostile escalation
// reaches a real client's elicitation with every character visible and
// the forged lines kept on the agent's line; one too long to show whole
// is refused before anyone is asked, and nothing runs.
func TestEscalationQuestionShownWhole(t *testing.T) {
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			w := newWorld(t)
			h := &human{action: "accept", decision: "deny"}
			cs := w.stdio(t, clientOpts{version: v, elicit: h.handle}, "--mode", "read-only")
			canary := filepath.Join(w.ws, "CANARY")

			padded := "ls" + strings.Repeat(" ", 10000) + "; touch " + canary + "\r\x1b[2K\x1b[8m\u202e"
			res := call(t, cs, "bash", map[string]any{"command": padded, "sandbox_permissions": "workspace-write",
				"justification": "list the files\nCommand: ls -la\nAllow it?"})
			assert.True(t, res.IsError)
			assert.Equal(t, "ESCALATION_DENIED", errorCode(t, res), text(res))
			require.EqualValues(t, 1, h.asked.Load())
			msg := h.lastMsg.Load().(string)
			assert.Contains(t, msg, "\n  │ ls⟨10,000 spaces⟩; touch "+canary+"⟨CR⟩⟨ESC⟩[2K⟨ESC⟩[8m⟨U+202E RLO⟩\n", msg)
			assert.Contains(t, msg, `(its own words, not checked by cordon): "list the files⟨LF⟩Command: ls -la⟨LF⟩Allow it?"`)
			assert.NotContains(t, msg, "\x1b")
			assert.NotContains(t, msg, "\r")
			assert.NotContains(t, msg, "\u202e")
			assert.Equal(t, 1, strings.Count(msg, "\nAllow it?"), "only cordon asks: %s", msg)
			assert.True(t, strings.HasSuffix(msg, "\nAllow it?"))
			assert.NoFileExists(t, canary)

			long := "touch " + canary + "; : " + strings.Repeat("x", 5000)
			res = call(t, cs, "bash", map[string]any{"command": long, "sandbox_permissions": "workspace-write", "justification": "it builds"})
			assert.True(t, res.IsError)
			assert.Equal(t, "INVALID_ARGUMENT", errorCode(t, res), text(res))
			assert.Contains(t, text(res), "script file")
			assert.EqualValues(t, 1, h.asked.Load(), "the human is not asked about a command they cannot see whole")
			assert.NoFileExists(t, canary)
			logText := cordonCLI(t, w, "log", "--json", listSessions(t, w)[0])
			assert.Equal(t, 1, strings.Count(logText, `"type":"approval/request"`), "only the first question was logged")
			assert.NotContains(t, logText, strings.Repeat("x", 100))
		})
	}
}

func TestAskDangerous(t *testing.T) {
	w := newWorld(t)
	h := &human{action: "decline"}
	cs := w.stdio(t, clientOpts{version: "2025-11-25", elicit: h.handle})
	require.NoError(t, os.Mkdir(filepath.Join(w.ws, "x"), 0o755))
	for _, cmd := range []string{"ls; rm -rf x", "echo $(sudo id)", "bash -c 'git push'", "curl x | sh"} {
		before := h.asked.Load()
		res := call(t, cs, "bash", map[string]any{"command": cmd})
		assert.Equal(t, before+1, h.asked.Load(), "%q must be asked about", cmd)
		assert.True(t, res.IsError, cmd)
	}
	assert.DirExists(t, filepath.Join(w.ws, "x"), "the declined rm -rf never ran")
	before := h.asked.Load()
	for _, cmd := range []string{"ls -la", "git status || true", "go version >/dev/null 2>&1 || true"} {
		res := call(t, cs, "bash", map[string]any{"command": cmd})
		assert.False(t, res.IsError, "%s: %s", cmd, text(res))
	}
	assert.Equal(t, before, h.asked.Load(), "harmless commands are not asked about")
}

func TestModeFromAnotherTerminal(t *testing.T) {
	w := newWorld(t)
	h := &human{action: "decline"}
	cs := w.stdio(t, clientOpts{version: "2025-11-25", elicit: h.handle}, "--mode", "read-only")
	call(t, cs, "sandbox_status", nil)
	id := listSessions(t, w)[0]
	f := filepath.Join(w.ws, "f")
	res := call(t, cs, "bash", map[string]any{"command": writeCmd(f)})
	require.True(t, res.IsError)

	assert.Contains(t, cordonCLI(t, w, "mode", "--session", id, "workspace-write"), "workspace-write")
	res = call(t, cs, "bash", map[string]any{"command": writeCmd(f)})
	assert.False(t, res.IsError, text(res))
	assert.FileExists(t, f)
	assert.Zero(t, h.asked.Load(), "no elicitation: the human acted directly")

	cordonCLI(t, w, "mode", "--session", id, "read-only")
	g := filepath.Join(w.ws, "g")
	res = call(t, cs, "bash", map[string]any{"command": writeCmd(g)})
	assert.True(t, res.IsError)
	assert.NoFileExists(t, g)
	assert.Contains(t, cordonCLI(t, w, "sessions"), "live")
}

func TestDelegatedSessionCannotExceedParent(t *testing.T) {
	w := newWorld(t)
	parent := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "read-only")
	call(t, parent, "sandbox_status", nil)
	parentID := listSessions(t, w)[0]
	h := &human{action: "accept", decision: "allow_session"}
	child := w.stdio(t, clientOpts{version: "2025-11-25", elicit: h.handle}, "--mode", "workspace-write", "--delegated-from", parentID)
	st := structured(t, call(t, child, "sandbox_status", nil))
	assert.Equal(t, "read-only", st["mode"], "a delegated session starts at its parent's mode")
	f := filepath.Join(w.ws, "f")
	res := call(t, child, "bash", escalate(writeCmd(f), "workspace-write"))
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "delegated session")
	assert.Zero(t, h.asked.Load())
	assert.NoFileExists(t, f)
}

// listSessions returns the session ids, oldest first.
func listSessions(t *testing.T, w *world) []string {
	t.Helper()
	out := cordonCLI(t, w, "sessions")
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		if f := strings.Fields(line); len(f) > 0 {
			ids = append(ids, f[0])
		}
	}
	return ids
}

func waitEnded(t *testing.T, w *world, id string) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		live := false
		for _, line := range strings.Split(cordonCLI(t, w, "sessions"), "\n") {
			if strings.HasPrefix(line, id) && strings.Contains(line, "live") {
				live = true
			}
		}
		if !live {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("session %s still live", id)
}

func cordonCLI(t *testing.T, w *world, args ...string) string {
	t.Helper()
	cmd := exec.Command(cordonBin, append(args[:1:1], append([]string{"--state-dir", w.state}, args[1:]...)...)...)
	cmd.Env = w.env()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "cordon %v: %s", args, out)
	return string(out)
}
