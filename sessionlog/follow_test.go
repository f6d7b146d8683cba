package sessionlog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFollowerReadsTheModeAsItChanges: a follower sees the mode a session
// starts with, every later change whoever writes it, and a log broken
// under it fails from then on rather than keep an older, wider, mode.
func TestFollowerReadsTheModeAsItChanges(t *testing.T) {
	dir := t.TempDir()
	l, err := Create(dir, "parent", StartInfo{Mode: "workspace-write"})
	require.NoError(t, err)
	defer l.Close()
	fl, err := Follow(dir, "parent")
	require.NoError(t, err)
	defer fl.Close()

	m, err := fl.Mode()
	require.NoError(t, err)
	assert.Equal(t, "workspace-write", m, "no sandbox/mode yet: the mode it started with")

	_, err = AppendTo(dir, "parent", EventSandboxMode, ModeData{Mode: "read-only", Source: SourceUser})
	require.NoError(t, err)
	m, err = fl.Mode()
	require.NoError(t, err)
	assert.Equal(t, "read-only", m, "`cordon mode` from another process")

	_, err = l.SetMode("danger-full-access", SourceEscalation)
	require.NoError(t, err)
	_, err = l.Append(EventToolCall, map[string]any{"tool": "bash"})
	require.NoError(t, err)
	m, err = fl.Mode()
	require.NoError(t, err)
	assert.Equal(t, "danger-full-access", m)

	require.NoError(t, os.Truncate(filepath.Join(dir, "parent.jsonl"), 10))
	_, err = fl.Mode()
	assert.Error(t, err, "a log that shrank cannot be trusted")
	_, err = fl.Mode()
	assert.Error(t, err, "and stays untrusted")
}

func TestFollowMissingSession(t *testing.T) {
	_, err := Follow(t.TempDir(), "nobody")
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = Follow(t.TempDir(), "../x")
	assert.Error(t, err)
}
