package sessionlog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestList(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	got, err := List(dir)
	require.NoError(t, err, "no sessions directory yet: no sessions")
	assert.Empty(t, got)

	ended, err := Create(dir, "ended", StartInfo{Workspace: "/w/ended", Mode: "workspace-write"})
	require.NoError(t, err)
	require.NoError(t, ended.Close())

	live, err := Create(dir, "live", StartInfo{Workspace: "/w/live", Mode: "workspace-write"})
	require.NoError(t, err)
	defer live.Close()
	_, err = live.SetMode("read-only", SourceUser)
	require.NoError(t, err)

	child, err := Create(dir, "sub", StartInfo{ParentSession: "live", Mode: "read-only"})
	require.NoError(t, err)
	require.NoError(t, child.Close())

	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.jsonl"), []byte("{}\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a session"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".hidden.jsonl"), nil, 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "dir.jsonl"), 0o700))

	got, err = List(dir)
	require.NoError(t, err)
	byID := map[string]Summary{}
	for _, s := range got {
		byID[s.ID] = s
	}
	require.Len(t, byID, 4, "%+v", got)

	assert.Equal(t, Summary{ID: "ended", Start: byID["ended"].Start, Workspace: "/w/ended",
		Mode: "workspace-write", ModeSource: ModeSourceStart, Events: 1}, byID["ended"])
	assert.Equal(t, Summary{ID: "live", Start: byID["live"].Start, Workspace: "/w/live",
		Mode: "read-only", ModeSource: SourceUser, Live: true, Events: 2}, byID["live"])
	assert.Equal(t, Summary{ID: "sub", Start: byID["sub"].Start, ParentSession: "live",
		Mode: "read-only", ModeSource: SourceDelegation, Events: 2}, byID["sub"])
	assert.False(t, byID["live"].Start.IsZero())
	assert.NotEmpty(t, byID["broken"].Error)
	assert.Empty(t, byID["broken"].Mode)

	// Oldest first; the broken log has no start time and sorts first.
	assert.Equal(t, []string{"broken", "ended", "live", "sub"}, []string{got[0].ID, got[1].ID, got[2].ID, got[3].ID})

	require.NoError(t, live.Close())
	isLive, err := IsLive(dir, "live")
	require.NoError(t, err)
	assert.False(t, isLive, "Close ends the session")
	isLive, err = IsLive(dir, "never")
	require.NoError(t, err)
	assert.False(t, isLive)
	_, err = IsLive(dir, "../x")
	assert.ErrorIs(t, err, ErrInvalidSessionID)
}

// TestLivenessProbeDoesNotBlockOpen: a List running at the moment a server
// opens the session must not make the open fail.
func TestLivenessProbeDoesNotBlockOpen(t *testing.T) {
	dir := t.TempDir()
	l, err := Create(dir, "s", StartInfo{})
	require.NoError(t, err)
	require.NoError(t, l.Close())

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				_, _ = IsLive(dir, "s")
			}
		}
	}()
	for range 20 {
		l, err := Open(dir, "s")
		require.NoError(t, err)
		require.NoError(t, l.Close())
	}
	close(stop)
	<-done
}
