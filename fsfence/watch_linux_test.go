//go:build linux

package fsfence_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordonhq/cordon/fsfence"
)

// TestInputWatch: a watch over a path through a symlink, and over a file's
// content, reports every change that would make resolving or reading them
// again differ, and stays current through changes beside them.
func TestInputWatch(t *testing.T) {
	type setup struct{ base, link, file string }
	mk := func(t *testing.T) setup {
		base, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		s := setup{base: base, link: filepath.Join(base, "a", "link", "leaf"), file: filepath.Join(base, "a", "pointer")}
		for _, d := range []string{"a", "real/leaf", "other/leaf"} {
			require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
		}
		require.NoError(t, os.Symlink("../real", filepath.Join(base, "a", "link")))
		require.NoError(t, os.WriteFile(s.file, []byte("gitdir: x\n"), 0o644))
		return s
	}
	cases := []struct {
		name    string
		change  func(t *testing.T, s setup)
		current bool
	}{
		{"nothing", func(*testing.T, setup) {}, true},
		{"a file beside the inputs", func(t *testing.T, s setup) {
			require.NoError(t, os.WriteFile(filepath.Join(s.base, "a", "unrelated"), []byte("x"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(s.base, "real", "unrelated"), []byte("x"), 0o644))
		}, true},
		{"the symlink re-pointed", func(t *testing.T, s setup) {
			require.NoError(t, os.Remove(filepath.Join(s.base, "a", "link")))
			require.NoError(t, os.Symlink("../other", filepath.Join(s.base, "a", "link")))
		}, false},
		{"the target's leaf replaced", func(t *testing.T, s setup) {
			require.NoError(t, os.Rename(filepath.Join(s.base, "real", "leaf"), filepath.Join(s.base, "real", "old")))
			require.NoError(t, os.Mkdir(filepath.Join(s.base, "real", "leaf"), 0o755))
		}, false},
		{"a directory on the way moved", func(t *testing.T, s setup) {
			require.NoError(t, os.Rename(filepath.Join(s.base, "real"), filepath.Join(s.base, "moved")))
		}, false},
		{"the leaf's permissions", func(t *testing.T, s setup) {
			require.NoError(t, os.Chmod(filepath.Join(s.base, "real", "leaf"), 0o700))
		}, false},
		{"the content rewritten in place", func(t *testing.T, s setup) {
			f, err := os.OpenFile(s.file, os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteAt([]byte("gitdir: y\n"), 0)
			require.NoError(t, err)
			// Still open: the write alone must be seen.
			t.Cleanup(func() { f.Close() })
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mk(t)
			w := fsfence.WatchInputs(fsfence.Inputs{Paths: []string{s.link}, Contents: []string{s.file}})
			require.True(t, w.Current(), "a fresh watch is current")
			c.change(t, s)
			assert.Equal(t, c.current, w.Current())
			if !c.current {
				assert.False(t, w.Current(), "a change is not forgotten once reported")
			}
		})
	}
}
