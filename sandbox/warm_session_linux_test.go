package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWarmSandboxEndsWithItsSession: a session's warm sandboxes (bwrap or
// the reaper, the helper, the zygote) end when the session ends — the idle
// one at once, the one busy with a call when that call gives it back —
// rather than idling on under the server, where nothing could take them
// again (their key holds the session's private /tmp).
func TestWarmSandboxEndsWithItsSession(t *testing.T) {
	eachWarmBackend(t, func(t *testing.T, w *warmFixture) {
		p := w.policy(WorkspaceWrite, NetworkDeny)
		idle := w.warmUp(p)
		require.NotEmpty(t, processesWith(w.tmp), "the warm sandbox names the session's /tmp")

		// A second sandbox of the same session, busy with a call as the
		// session ends.
		marker := filepath.Join(w.ws, "go-on")
		ranDone := make(chan struct{})
		go func() {
			defer close(ranDone)
			w.run(t.Context(), p, `while [ ! -e go-on ]; do sleep 0.05; done`)
		}()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) && len(w.idle()) != 0 {
			time.Sleep(20 * time.Millisecond) // the busy call took the idle one
		}
		require.Empty(t, w.idle(), "the call took the idle sandbox")

		// The session ends as the server ends it: its /tmp goes, then its
		// sandboxes.
		require.NoError(t, os.RemoveAll(w.tmp))
		w.ex.EndSession(w.tmp)
		require.NoError(t, os.WriteFile(marker, nil, 0o644))
		<-ranDone
		assert.Empty(t, w.idle(), "no sandbox of an ended session is kept")
		select {
		case <-idle[0].exited:
		case <-time.After(20 * time.Second):
			t.Fatal("the session's warm sandbox is still running")
		}
		assert.Empty(t, waitGone(w.tmp), "a process of the ended session's sandbox lives on:\n%s", processTree(w.tmp))
	})
}

// TestWarmIdleSandboxEndsWithItsSessionOnly: ending one session leaves the
// warm sandboxes of the others, and ends its own idle one at once.
func TestWarmIdleSandboxEndsWithItsSessionOnly(t *testing.T) {
	w := newWarmFixture(t, "bwrap")
	idle := w.warmUp(w.policy(WorkspaceWrite, NetworkDeny))
	w.ex.EndSession(filepath.Join(w.state, "another-session"))
	assert.Len(t, w.idle(), 1)
	w.ex.EndSession(w.tmp)
	assert.Empty(t, w.idle())
	select {
	case <-idle[0].exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the session's idle warm sandbox is still running")
	}
}
