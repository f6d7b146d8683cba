package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// worktreeFixture is a main repository and a linked worktree of it laid
// out as `git worktree add` does, which each case then damages.
type worktreeFixture struct {
	base, ws, common, gitdir, tmp string
}

func newWorktreeFixture(t *testing.T) worktreeFixture {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f := worktreeFixture{base: base, ws: filepath.Join(base, "wt"), common: filepath.Join(base, "main", ".git"),
		tmp: filepath.Join(base, "tmp")}
	f.gitdir = filepath.Join(f.common, "worktrees", "wt")
	for _, d := range []string{f.gitdir, f.ws, f.tmp} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	f.write(t, filepath.Join(f.gitdir, "commondir"), "../..\n")
	f.write(t, filepath.Join(f.gitdir, "gitdir"), filepath.Join(f.ws, ".git")+"\n")
	f.write(t, filepath.Join(f.ws, ".git"), "gitdir: "+f.gitdir+"\n")
	return f
}

func (worktreeFixture) write(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func (f worktreeFixture) roots(t *testing.T) []string {
	t.Helper()
	svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: f.ws}}
	p, err := svc.Resolve(Request{TmpDir: f.tmp})
	require.NoError(t, err)
	return p.WritableRoots
}

func TestLinkedWorktreeAsGitMadeIt(t *testing.T) {
	f := newWorktreeFixture(t)
	assert.Equal(t, []string{f.ws, f.gitdir, f.common, f.tmp}, f.roots(t))
	// git writes relative pointers too (worktree.useRelativePaths).
	f.write(t, filepath.Join(f.ws, ".git"), "gitdir: ../main/.git/worktrees/wt\n")
	f.write(t, filepath.Join(f.gitdir, "gitdir"), "../../../../wt/.git\n")
	assert.Equal(t, []string{f.ws, f.gitdir, f.common, f.tmp}, f.roots(t))
}

// A confined command can write the workspace's .git file (Landlock cannot
// keep one file of a writable directory read-only), and whatever it names
// would become a writable root at the next call. Each forgery here must
// leave the roots as if there were no worktree.
func TestLinkedWorktreeForgeriesGrantNothing(t *testing.T) {
	outside := func(f worktreeFixture) string { return filepath.Join(f.base, "victim") }
	cases := []struct {
		name  string
		forge func(t *testing.T, f worktreeFixture)
	}{
		{"a FIFO as back-pointer does not hang the server", func(t *testing.T, f worktreeFixture) {
			require.NoError(t, os.Remove(filepath.Join(f.gitdir, "gitdir")))
			mkfifo(t, filepath.Join(f.gitdir, "gitdir"))
		}},
		{"gitdir names any directory", func(t *testing.T, f worktreeFixture) {
			require.NoError(t, os.MkdirAll(outside(f), 0o755))
			f.write(t, filepath.Join(f.ws, ".git"), "gitdir: "+outside(f)+"\n")
		}},
		{"gitdir without the back-pointer", func(t *testing.T, f worktreeFixture) {
			require.NoError(t, os.Remove(filepath.Join(f.gitdir, "gitdir")))
		}},
		{"back-pointer to another worktree", func(t *testing.T, f worktreeFixture) {
			f.write(t, filepath.Join(f.gitdir, "gitdir"), filepath.Join(f.base, "other", ".git")+"\n")
		}},
		{"commondir that is not the gitdir's grandparent", func(t *testing.T, f worktreeFixture) {
			require.NoError(t, os.MkdirAll(outside(f), 0o755))
			f.write(t, filepath.Join(f.gitdir, "commondir"), outside(f)+"\n")
		}},
		{"gitdir forged inside the workspace", func(t *testing.T, f worktreeFixture) {
			// <ws>/worktrees/x is the workspace's own; its commondir would
			// be the workspace, but a gitdir of "." would make the
			// workspace's grandparent writable.
			f.write(t, filepath.Join(f.ws, "gitdir"), filepath.Join(f.ws, ".git")+"\n")
			f.write(t, filepath.Join(f.ws, "commondir"), "../..\n")
			f.write(t, filepath.Join(f.ws, ".git"), "gitdir: .\n")
		}},
		{"gitdir forged in the session tmp", func(t *testing.T, f worktreeFixture) {
			g := filepath.Join(f.tmp, "worktrees", "wt")
			f.write(t, filepath.Join(g, "gitdir"), filepath.Join(f.ws, ".git")+"\n")
			f.write(t, filepath.Join(g, "commondir"), "../..\n")
			f.write(t, filepath.Join(f.ws, ".git"), "gitdir: "+g+"\n")
		}},
		{"pointer that is a symlink", func(t *testing.T, f worktreeFixture) {
			real := filepath.Join(f.base, "gitfile")
			f.write(t, real, "gitdir: "+f.gitdir+"\n")
			require.NoError(t, os.Remove(filepath.Join(f.ws, ".git")))
			require.NoError(t, os.Symlink(real, filepath.Join(f.ws, ".git")))
		}},
		{"oversized .git file", func(t *testing.T, f worktreeFixture) {
			f.write(t, filepath.Join(f.ws, ".git"), "gitdir: "+f.gitdir+"\n"+string(make([]byte, 5000)))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newWorktreeFixture(t)
			c.forge(t, f)
			assert.Equal(t, []string{f.ws, f.tmp}, f.roots(t))
		})
	}
}
