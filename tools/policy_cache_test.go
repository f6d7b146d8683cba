package tools_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
)

// The toolbox keeps a resolved policy between calls. These change the
// file system under a warm toolbox and require the next call to decide as
// a freshly resolved policy would, proving the refused writes did not land.

func TestWarmPolicyFollowsALinkedWorktree(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	common := filepath.Join(w.outside, "main", ".git")
	gitdir := filepath.Join(common, "worktrees", "ws")
	require.NoError(t, os.MkdirAll(gitdir, 0o755))
	target := filepath.Join(gitdir, "index.lock")

	// Whether the gitdir is a writable root (for the shell's git), as
	// sandbox_status says; the file tools write in no gitdir either way.
	writable := func() bool {
		res, terr := w.tb.Status(bg, w.call, tools.StatusInput{})
		require.Nil(t, terr)
		_, terr = w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: target, Content: "x"})
		requireFileDenied(t, terr, sandbox.WorkspaceWrite)
		require.NoFileExists(t, target)
		for _, line := range strings.Split(res.Text, "\n") {
			if roots, ok := strings.CutPrefix(line, "writable roots: "); ok {
				return slices.Contains(strings.Split(roots, ", "), gitdir)
			}
		}
		t.Fatalf("no writable roots in %q", res.Text)
		return false
	}
	require.False(t, writable(), "warm: no worktree yet")

	// git worktree add, as git lays it out: now the gitdir is writable.
	require.NoError(t, os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(gitdir, "gitdir"), []byte(filepath.Join(w.ws, ".git")+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644))
	require.True(t, writable())

	// The back-pointer rewritten in place (same inode): a forgery again.
	f, err := os.OpenFile(filepath.Join(gitdir, "gitdir"), os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	_, err = f.WriteString(filepath.Join(w.base, "elsewhere", ".git") + "\n")
	require.NoError(t, err)
	require.False(t, writable())
	f.Close()
}

func TestWarmPolicyFollowsTheWorkspaceSymlink(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	other := filepath.Join(w.base, "other")
	require.NoError(t, os.Mkdir(other, 0o755))
	link := filepath.Join(w.base, "current")
	require.NoError(t, os.Symlink(w.ws, link))
	w.call.Session.Workspace = link

	_, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "a.txt", Content: "one"})
	require.Nil(t, terr)
	require.FileExists(t, filepath.Join(w.ws, "a.txt"))

	// Re-pointed: the workspace is now the other directory, and the old
	// one is outside every writable root.
	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(other, link))
	_, terr = w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "b.txt", Content: "two"})
	require.Nil(t, terr)
	require.FileExists(t, filepath.Join(other, "b.txt"))
	require.NoFileExists(t, filepath.Join(w.ws, "b.txt"))
	_, terr = w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: filepath.Join(w.ws, "c.txt"), Content: "three"})
	requireFileDenied(t, terr, sandbox.WorkspaceWrite)
	require.NoFileExists(t, filepath.Join(w.ws, "c.txt"))
}

func TestWarmPolicyFollowsANewCredentialLink(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "cloud/credentials", fileCanary)
	res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: "cloud/credentials"})
	require.Nil(t, terr)
	require.Contains(t, res.Text, fileCanary)

	// ~/.aws appears as a symlink to that directory: it is a credential
	// store now, read-deny however it is named.
	require.NoError(t, os.Symlink(filepath.Join(w.ws, "cloud"), filepath.Join(w.home, ".aws")))
	_, terr = w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: "cloud/credentials"})
	requireFileDenied(t, terr, sandbox.WorkspaceWrite)
}
