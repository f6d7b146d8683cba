package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSessionTmp(t *testing.T) {
	state := t.TempDir()
	a, err := NewSessionTmp(state)
	require.NoError(t, err)
	b, err := NewSessionTmp(state)
	require.NoError(t, err)
	assert.NotEqual(t, a.Path, b.Path, "two sessions get different tmp directories")

	require.NoError(t, os.RemoveAll(a.Path))
	recreated, err := a.Ensure()
	require.NoError(t, err)
	assert.True(t, recreated)
	assert.DirExists(t, a.Path)
	recreated, err = a.Ensure()
	require.NoError(t, err)
	assert.False(t, recreated)

	old := time.Now().Add(-49 * time.Hour)
	orphan := filepath.Join(state, "tmp", "orphan")
	require.NoError(t, os.MkdirAll(filepath.Join(orphan, "sub"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(orphan, "sub", "f"), []byte("x"), 0o600))
	young := filepath.Join(state, "tmp", "young")
	require.NoError(t, os.Mkdir(young, 0o700))
	target := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(target, "keep"), []byte("keep"), 0o600))
	link := filepath.Join(state, "tmp", "link")
	require.NoError(t, os.Symlink(target, link))
	for _, p := range []string{orphan, a.Path, b.Path} {
		require.NoError(t, os.Chtimes(p, old, old))
	}
	require.NoError(t, os.Chtimes(target, old, old))
	require.NoError(t, b.Remove()) // b's lock is released: an orphan now
	require.NoError(t, os.Mkdir(b.Path, 0o700))
	require.NoError(t, os.Chtimes(b.Path, old, old))

	removed := CleanOrphanTmp(state, OrphanAge)
	assert.ElementsMatch(t, []string{orphan, b.Path}, removed)
	assert.NoDirExists(t, orphan, "an unlocked orphan older than 48 h goes")
	assert.DirExists(t, a.Path, "a locked (live) one stays, however old")
	assert.DirExists(t, young, "a young one stays")
	assert.FileExists(t, filepath.Join(target, "keep"), "a symlinked orphan is never followed")
	_, err = os.Lstat(link)
	assert.NoError(t, err, "nor removed")
	require.NoError(t, a.Remove())
}
