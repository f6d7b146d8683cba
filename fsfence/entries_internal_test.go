//go:build unix

package fsfence

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// linkMaze makes a directory full of symlinks of every shape EvalSymlinks
// distinguishes and returns it with the names in it.
func linkMaze(t *testing.T) (string, []string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(base, "d", "e"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(base, "f"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(base, "d", "g"), nil, 0o644))
	links := map[string]string{
		"rel":       "d",
		"abs":       filepath.Join(base, "d", "e"),
		"up":        filepath.Join("..", filepath.Base(base), "d"),
		"dangling":  "nowhere/x",
		"loop":      "loop",
		"loop2":     "loop3/x",
		"loop3":     "loop2",
		"tofile":    "f",
		"fileslash": "f/",
		"dirslash":  "d/",
		"dotdot":    "d/e/../e/.",
		"chain":     "rel/e",
		"root":      "/",
		"parent":    "..",
		"viafile":   "tofile/x",
		"d/e/back":  "../../rel",
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(base, name)))
	}
	names := []string{"d", "e", "f", "g", "missing"}
	for name := range links {
		names = append(names, filepath.Base(name))
	}
	return base, names
}

// TestResolveEntryMatchesEvalSymlinks proves that resolveEntry, from which
// the cached entries are derived, gives the forms that EvalSymlinks and
// stat(2) give, for every path of up to three components in the maze.
func TestResolveEntryMatchesEvalSymlinks(t *testing.T) {
	base, names := linkMaze(t)
	paths := []string{"/", base}
	layer := []string{base}
	// Three levels of the maze take most of fsfence's test time; -short
	// (make test-short) walks two.
	depth := 3
	if testing.Short() {
		depth = 2
	}
	for range depth {
		var next []string
		for _, p := range layer {
			for _, n := range names {
				next = append(next, filepath.Join(p, n))
			}
		}
		paths = append(paths, next...)
		layer = next
	}
	for _, p := range paths {
		wantCanon := canonical(p)
		wantID, wantOK := statID(p)
		canon, final := resolveEntry(p, lookPath)
		require.Equal(t, wantCanon, canon, "canonical form of %s", p)
		require.Equal(t, wantOK, final.kind != kindMissing, "existence of %s", p)
		if wantOK {
			require.True(t, wantID.same(final.id), "identity of %s", p)
		}
	}
}

// TestEntrySnapshotNoticesChanges: every kind of change on an entry's way
// makes the snapshot stale, and an unchanged tree keeps it.
func TestEntrySnapshotNoticesChanges(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	p := func(rel string) string { return filepath.Join(base, filepath.FromSlash(rel)) }
	require.NoError(t, os.MkdirAll(p("a/b"), 0o755))
	require.NoError(t, os.MkdirAll(p("other/b"), 0o755))
	require.NoError(t, os.WriteFile(p("a/b/file"), nil, 0o644))
	require.NoError(t, os.Symlink("a", p("link")))
	entries := []string{p("link/b/file"), p("link/b/missing"), p("a/missing/deeper")}
	changes := []struct {
		name   string
		change func()
	}{
		{"entry created", func() { require.NoError(t, os.WriteFile(p("a/b/missing"), nil, 0o644)) }},
		{"entry replaced", func() {
			require.NoError(t, os.WriteFile(p("a/b/file.new"), nil, 0o644))
			require.NoError(t, os.Rename(p("a/b/file.new"), p("a/b/file")))
		}},
		{"entry removed", func() { require.NoError(t, os.Remove(p("a/b/file"))) }},
		{"parent of a missing entry made", func() { require.NoError(t, os.Mkdir(p("a/missing"), 0o755)) }},
		{"link re-pointed", func() {
			require.NoError(t, os.Symlink("other", p("link.new")))
			require.NoError(t, os.Rename(p("link.new"), p("link")))
		}},
		{"directory replaced by a link", func() {
			require.NoError(t, os.Rename(p("a"), p("a.old")))
			require.NoError(t, os.Symlink("other", p("a")))
		}},
		{"link replaced by a directory", func() {
			require.NoError(t, os.Remove(p("link")))
			require.NoError(t, os.MkdirAll(p("link/b"), 0o755))
		}},
	}
	c := &entryCache{lists: [][]string{entries}}
	for _, ch := range changes {
		m := c.matcher()
		s := c.snap.Load()
		require.NotNil(t, s, ch.name)
		require.True(t, s.current(), ch.name)
		require.Same(t, m, c.matcher(), "an unchanged tree must reuse the snapshot (%s)", ch.name)
		ch.change()
		require.False(t, s.current(), "stale after: %s", ch.name)
		fresh, _, ok := buildMatcher(nil, entries)
		require.True(t, ok)
		requireSameMatcher(t, fresh, c.matcher(), "rebuilt after: %s", ch.name)
	}
}

func requireSameMatcher(t *testing.T, want, got *matcher, msg string, args ...any) {
	t.Helper()
	require.Equal(t, want.paths, got.paths, append([]any{msg}, args...)...)
	require.Len(t, got.ids, len(want.ids), append([]any{msg}, args...)...)
	for i := range want.ids {
		require.Equal(t, want.ids[i].entry, got.ids[i].entry, append([]any{msg}, args...)...)
		require.True(t, want.ids[i].id.same(got.ids[i].id), append([]any{msg}, args...)...)
	}
}
