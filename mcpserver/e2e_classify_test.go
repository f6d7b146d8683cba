//go:build linux

package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// questions records what the human was asked and answers with whatever
// decision the test set last.
type questions struct {
	mu       sync.Mutex
	asked    []string
	decision string // "" declines
}

func (q *questions) handle(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.asked = append(q.asked, req.Params.Message)
	if q.decision == "" {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": q.decision}}, nil
}

func (q *questions) answer(decision string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.decision = decision
}

func (q *questions) all() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.asked...)
}

// TestAskDangerousHiddenPush: under the default preset, a git push hidden
// in a shell function is asked about, and declined it pushes nothing to a
// real bare remote, judged by the remote's refs on the host. The same push
// approved lands, so the refusal is the human's and not the sandbox's.
func TestAskDangerousHiddenPush(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			remote := filepath.Join(w.ws, "remote.git")
			host := func(dir string, args ...string) string {
				t.Helper()
				cmd := exec.Command("git", append([]string{"-c", "user.name=human", "-c", "user.email=h@example.com",
					"-c", "init.defaultBranch=main"}, args...)...)
				cmd.Dir = dir
				cmd.Env = append(w.env(), "GIT_CONFIG_NOSYSTEM=1")
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "git %v: %s", args, out)
				return string(out)
			}
			host(w.ws, "init", "-q", "--bare", remote)
			host(w.ws, "init", "-q")
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, "a.txt"), []byte("a\n"), 0o644))
			host(w.ws, "add", "a.txt")
			host(w.ws, "commit", "-qm", "first")
			host(w.ws, "remote", "add", "origin", remote)
			remoteRefs := func() string { return host(remote, "for-each-ref", "--format=%(refname)") }
			require.Empty(t, remoteRefs())

			q := &questions{}
			cs := w.stdio(t, clientOpts{version: "2025-11-25", elicit: q.handle}, "--backend", backend)
			st := structured(t, call(t, cs, "sandbox_status", nil))
			require.Equal(t, "review", st["preset"], "the default preset")

			// The first is the one the brief names; on the old classifier
			// only the body's git push made it ask. The others were not
			// asked about at all.
			hidden := []string{
				"f(){ git push origin main; }; f",
				`f(){ git "$@"; }; f push origin main`,
				"printf 'git push origin main' | sh",
				"echo push | xargs -I{} git {} origin main",
			}
			for i, cmd := range hidden {
				res := call(t, cs, "bash", map[string]any{"command": cmd})
				asked := q.all()
				require.Len(t, asked, i+1, "%q must be asked about", cmd)
				assert.True(t, res.IsError, text(res))
				assert.Contains(t, text(res), "the human did not approve this call")
				assert.Empty(t, remoteRefs(), "declined, %q pushed nothing", cmd)
			}
			assert.Contains(t, q.all()[0], "defines a function")
			assert.Contains(t, q.all()[0], "git push origin main")

			push := hidden[1] // the form the old classifier let through
			if backend == "landlock" {
				// git receive-pack renames objects from its quarantine
				// directory into objects/, which Landlock refuses here
				// (EXDEV), so the approved push cannot be the control.
				return
			}
			q.answer("allow_once")
			res := call(t, cs, "bash", map[string]any{"command": push})
			require.False(t, res.IsError, text(res))
			assert.Len(t, q.all(), len(hidden)+1)
			assert.Equal(t, "refs/heads/main", strings.TrimSpace(remoteRefs()), "approved, the same push lands")
		})
	}
}
