//go:build unix

package fsfence_test

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordonhq/cordon/fsfence"
)

// TestWriteFileDenied: every refusal leaves the whole tree — inside and
// outside the root — exactly as it was, with no temporary file behind.
func TestWriteFileDenied(t *testing.T) {
	tests := []struct {
		name   string
		path   func(tr *tree) string
		reason fsfence.Reason
	}{
		{"dotdot escape", func(tr *tree) string { return tr.ws + "/../outside/x.txt" }, fsfence.ReasonOutsideRoots},
		{"dotdot escape onto existing file", func(tr *tree) string { return tr.ws + "/sub/../../outside/target.txt" }, fsfence.ReasonOutsideRoots},
		{"absolute outside", func(tr *tree) string { return tr.p("outside/target.txt") }, fsfence.ReasonOutsideRoots},
		{"system file", func(*tree) string { return "/etc/cordon-fsfence-test" }, fsfence.ReasonOutsideRoots},
		{"prefix sibling new file", func(tr *tree) string { return tr.p("ws-evil/x.txt") }, fsfence.ReasonOutsideRoots},
		{"prefix sibling existing file", func(tr *tree) string { return tr.p("ws-evil/victim.txt") }, fsfence.ReasonOutsideRoots},
		{"symlinked dir outside", func(tr *tree) string { return tr.p("ws/linkout/x.txt") }, fsfence.ReasonSymlinkEscape},
		{"symlinked dir outside onto existing", func(tr *tree) string { return tr.p("ws/linkout/target.txt") }, fsfence.ReasonSymlinkEscape},
		{"symlink to file outside", func(tr *tree) string { return tr.p("ws/linkfile") }, fsfence.ReasonSymlinkEscape},
		{"relative symlink escape", func(tr *tree) string { return tr.p("ws/relout/x.txt") }, fsfence.ReasonSymlinkEscape},
		{"nested relative symlink escape", func(tr *tree) string { return tr.p("ws/sub/up/x.txt") }, fsfence.ReasonSymlinkEscape},
		{"dangling symlink outside", func(tr *tree) string { return tr.p("ws/dangling") }, fsfence.ReasonSymlinkEscape},
		{"magic link", func(tr *tree) string { return tr.p("ws/procroot/x.txt") }, fsfence.ReasonSymlinkEscape},
		{"proc self root", func(tr *tree) string { return "/proc/self/root" + tr.p("ws/x.txt") }, fsfence.ReasonOutsideRoots},
		{"git hooks existing dir", func(tr *tree) string { return tr.p("ws/.git/hooks/pre-commit") }, fsfence.ReasonProtected},
		{"git hooks existing file", func(tr *tree) string { return tr.p("ws/.git/hooks/pre-push") }, fsfence.ReasonProtected},
		{"git config", func(tr *tree) string { return tr.p("ws/.git/config") }, fsfence.ReasonProtected},
		{"git config case variant", func(tr *tree) string { return tr.p("ws/.GIT/CONFIG") }, fsfence.ReasonProtected},
		{"cordon dir created", func(tr *tree) string { return tr.p("ws/.cordon/config.toml") }, fsfence.ReasonProtected},
		{"cordon dir deep", func(tr *tree) string { return tr.p("ws/.cordon/a/b/c") }, fsfence.ReasonProtected},
		{"bashrc created", func(tr *tree) string { return tr.p("ws/.bashrc") }, fsfence.ReasonProtected},
		{"vscode created", func(tr *tree) string { return tr.p("ws/.vscode/tasks.json") }, fsfence.ReasonProtected},
		{"protected via alias dir", func(tr *tree) string { return tr.p("ws/gitalias/hooks/pre-commit") }, fsfence.ReasonProtected},
		{"protected via alias dir config", func(tr *tree) string { return tr.p("ws/gitalias/config") }, fsfence.ReasonProtected},
		{"protected via absolute alias", func(tr *tree) string { return tr.p("ws/cfgalias") }, fsfence.ReasonProtected},
		{"protected via dotdot", func(tr *tree) string { return tr.p("ws/sub/../.git/config") }, fsfence.ReasonProtected},
		{"protected path that is a symlink", func(tr *tree) string { return tr.p("ws/.profile") }, fsfence.ReasonProtected},
		{"target of a protected symlink", func(tr *tree) string { return tr.p("ws/notes.txt") }, fsfence.ReasonProtected},
		{"hard link to a protected file", func(tr *tree) string { return tr.p("ws/config-hardlink") }, fsfence.ReasonProtected},
		{"user config dir", func(tr *tree) string { return tr.p("home/.config/cordon/config.toml") }, fsfence.ReasonOutsideRoots},
		{"read-deny target via symlink", func(tr *tree) string { return tr.p("ws/sshlink") }, fsfence.ReasonSymlinkEscape},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			f := tr.fence(t)
			before := snapshot(t, tr.base)
			res, err := f.WriteFile(tc.path(tr), []byte("PWNED"))
			requireDenied(t, err, tc.reason)
			assert.Equal(t, fsfence.WriteResult{}, res)
			require.Equal(t, before, snapshot(t, tr.base), "a denied write changed the file system")
			_, err = os.Stat("/etc/cordon-fsfence-test")
			require.ErrorIs(t, err, fs.ErrNotExist)
			// CheckWrite agrees, and MkdirAll below it fails too.
			requireDenied(t, f.CheckWrite(tc.path(tr)), "")
			require.Error(t, f.MkdirAll(tc.path(tr)+"/d"))
			require.Equal(t, before, snapshot(t, tr.base))
		})
	}
}

// TestWriteFileAllowed: writes inside the root land exactly where expected.
func TestWriteFileAllowed(t *testing.T) {
	tests := []struct {
		name    string
		path    string // relative to the tree's base
		created bool
		changes map[string]string // expected new snapshot entries (relative to base)
	}{
		{"new file", "ws/new.txt", true, map[string]string{"ws/new.txt": fileDesc(0o644, []byte("data"))}},
		{"replace keeps mode", "ws/script.sh", false, map[string]string{"ws/script.sh": fileDesc(0o755, []byte("data"))}},
		{"parents created", "ws/a/b/c.txt", true, map[string]string{
			"ws/a": "dir 755", "ws/a/b": "dir 755", "ws/a/b/c.txt": fileDesc(0o644, []byte("data")),
		}},
		{"symlink inside (relative)", "ws/relin/file.txt", false, map[string]string{"ws/sub/file.txt": fileDesc(0o644, []byte("data"))}},
		{"symlink inside (absolute)", "ws/absin/new.txt", true, map[string]string{"ws/sub/new.txt": fileDesc(0o644, []byte("data"))}},
		{"dotdot inside", "ws/sub/../existing.txt", false, map[string]string{"ws/existing.txt": fileDesc(0o644, []byte("data"))}},
		{"git internals stay writable", "ws/.git/HEAD", false, map[string]string{"ws/.git/HEAD": fileDesc(0o644, []byte("data"))}},
		{"git objects created", "ws/.git/objects/ab/cdef", true, map[string]string{
			"ws/.git/objects": "dir 755", "ws/.git/objects/ab": "dir 755", "ws/.git/objects/ab/cdef": fileDesc(0o644, []byte("data")),
		}},
		{"name that merely starts like a protected one", "ws/.bashrc.d/x", true, map[string]string{
			"ws/.bashrc.d": "dir 755", "ws/.bashrc.d/x": fileDesc(0o644, []byte("data")),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			f := tr.fence(t)
			want := snapshot(t, tr.base)
			maps.Copy(want, tc.changes)
			require.NoError(t, f.CheckWrite(tr.p(tc.path)))
			res, err := f.WriteFile(tr.p(tc.path), []byte("data"))
			require.NoError(t, err)
			assert.Equal(t, fsfence.WriteResult{Created: tc.created, Bytes: 4}, res)
			require.Equal(t, want, snapshot(t, tr.base))
		})
	}
}

func TestWriteFileInvalidPath(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	before := snapshot(t, tr.base)
	for _, p := range []string{"", "relative.txt", "./x", "../x", tr.ws + "/a\x00b", "\x00"} {
		_, err := f.WriteFile(p, []byte("x"))
		require.ErrorIs(t, err, fsfence.ErrInvalidPath, "path %q", p)
		require.NotErrorIs(t, err, fsfence.ErrDenied)
		require.ErrorIs(t, f.CheckWrite(p), fsfence.ErrInvalidPath)
		_, err = f.OpenFile(p)
		require.ErrorIs(t, err, fsfence.ErrInvalidPath)
	}
	require.Equal(t, before, snapshot(t, tr.base))
}

func TestWriteFileOrdinaryErrors(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	before := snapshot(t, tr.base)

	_, err := f.WriteFile(tr.ws, []byte("x"))
	require.ErrorIs(t, err, syscall.EISDIR)
	require.NotErrorIs(t, err, fsfence.ErrDenied)

	_, err = f.WriteFile(tr.p("ws/sub"), []byte("x"))
	require.ErrorIs(t, err, syscall.EISDIR)

	_, err = f.WriteFile(tr.p("ws/existing.txt/x"), []byte("x"))
	require.ErrorIs(t, err, syscall.ENOTDIR)

	_, err = f.WriteFile(tr.p("ws/loop"), []byte("x"))
	require.ErrorIs(t, err, syscall.ELOOP)
	require.NotErrorIs(t, err, fsfence.ErrDenied)

	_, err = f.Edit(tr.p("ws/missing.txt"), func(b []byte) ([]byte, error) { return b, nil })
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.NotErrorIs(t, err, fsfence.ErrDenied)

	require.Equal(t, before, snapshot(t, tr.base))
}

func TestWritableRoots(t *testing.T) {
	t.Run("missing root matches nothing", func(t *testing.T) {
		tr := newTree(t)
		missing := tr.p("missing-root")
		f, err := fsfence.New(fsfence.Config{WritableRoots: []string{missing, tr.ws}})
		require.NoError(t, err)
		before := snapshot(t, tr.base)
		_, err = f.WriteFile(filepath.Join(missing, "x.txt"), []byte("x"))
		requireDenied(t, err, fsfence.ReasonOutsideRoots)
		requireDenied(t, f.MkdirAll(missing), fsfence.ReasonOutsideRoots)
		require.Equal(t, before, snapshot(t, tr.base))
		_, err = f.WriteFile(tr.p("ws/ok.txt"), []byte("x"))
		require.NoError(t, err)

		// Once it exists, it is a root.
		require.NoError(t, os.Mkdir(missing, 0o755))
		_, err = f.WriteFile(filepath.Join(missing, "x.txt"), []byte("x"))
		require.NoError(t, err)
	})
	t.Run("root through a symlink is refused", func(t *testing.T) {
		tr := newTree(t)
		alias := tr.p("wsalias")
		require.NoError(t, os.Symlink(tr.ws, alias))
		f, err := fsfence.New(fsfence.Config{WritableRoots: []string{alias}})
		require.NoError(t, err)
		before := snapshot(t, tr.base)
		_, err = f.WriteFile(filepath.Join(alias, "x.txt"), []byte("x"))
		requireDenied(t, err, fsfence.ReasonRootNotCanonical)
		require.Equal(t, before, snapshot(t, tr.base))
	})
	t.Run("no roots: read-only", func(t *testing.T) {
		tr := newTree(t)
		f, err := fsfence.New(fsfence.Config{})
		require.NoError(t, err)
		_, err = f.WriteFile(tr.p("ws/x.txt"), []byte("x"))
		requireDenied(t, err, fsfence.ReasonOutsideRoots)
	})
	t.Run("nested roots and a symlink between them", func(t *testing.T) {
		tr := newTree(t)
		other := tr.p("other")
		require.NoError(t, os.Mkdir(other, 0o755))
		require.NoError(t, os.Symlink(other, tr.p("ws/toother")))
		f, err := fsfence.New(fsfence.Config{WritableRoots: []string{tr.ws, other, tr.p("ws/sub")}})
		require.NoError(t, err)
		_, err = f.WriteFile(tr.p("ws/toother/x.txt"), []byte("x"))
		require.NoError(t, err, "a symlink from one root into another lands inside the roots")
		require.FileExists(t, filepath.Join(other, "x.txt"))
		_, err = f.WriteFile(tr.p("ws/sub/y.txt"), []byte("y"))
		require.NoError(t, err)
	})
	t.Run("invalid config", func(t *testing.T) {
		for _, cfg := range []fsfence.Config{
			{WritableRoots: []string{"relative"}},
			{Protected: []string{""}},
			{ReadDeny: []string{"/a\x00b"}},
		} {
			_, err := fsfence.New(cfg)
			require.ErrorIs(t, err, fsfence.ErrInvalidPath)
		}
	})
	t.Run("config is cleaned and copied", func(t *testing.T) {
		roots := []string{"/a/b/../c", "/a/c", "/x"}
		f, err := fsfence.New(fsfence.Config{WritableRoots: roots})
		require.NoError(t, err)
		roots[0] = "/"
		assert.ElementsMatch(t, []string{"/a/c", "/x"}, f.Config().WritableRoots)
	})
}

// TestGitSymlink: when .git itself is a symlink, the protected entries
// under it are recognised under the real name as well, and also before
// they exist.
func TestGitSymlink(t *testing.T) {
	tr := newTree(t)
	require.NoError(t, os.RemoveAll(tr.p("ws/.git")))
	require.NoError(t, os.MkdirAll(tr.p("ws/realgit"), 0o755))
	require.NoError(t, os.WriteFile(tr.p("ws/realgit/config"), []byte("[core]\n"), 0o644))
	require.NoError(t, os.Symlink("realgit", tr.p("ws/.git")))
	f := tr.fence(t)
	before := snapshot(t, tr.base)
	for _, p := range []string{"ws/.git/hooks/pre-commit", "ws/realgit/hooks/pre-commit", "ws/realgit/config", "ws/.git/config"} {
		_, err := f.WriteFile(tr.p(p), []byte("x"))
		requireDenied(t, err, fsfence.ReasonProtected)
	}
	require.Equal(t, before, snapshot(t, tr.base))
	_, err := f.WriteFile(tr.p("ws/realgit/HEAD"), []byte("ref"))
	require.NoError(t, err)
}

// TestRenamedIntoProtected: a directory that another process renames onto
// a protected path after the walk opened it is recognised by the kernel's
// view of the open handle, though the path the caller gave is harmless and
// the protected path did not exist when the call began.
func TestRenamedIntoProtected(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	require.NoError(t, os.Mkdir(tr.p("ws/d"), 0o755))
	defer fsfence.SetWalkHook(func() {
		require.NoError(t, os.Rename(tr.p("ws/d"), tr.p("ws/.cordon")))
	})()
	_, err := f.WriteFile(tr.p("ws/d/config.toml"), []byte("evil"))
	requireDenied(t, err, fsfence.ReasonProtected)
	require.NoFileExists(t, tr.p("ws/.cordon/config.toml"))
}

func TestReadDenyIsNotWritable(t *testing.T) {
	tr := newTree(t)
	// Home as a writable root: its credentials must still not be writable.
	f, err := fsfence.New(fsfence.Config{WritableRoots: []string{tr.home}, ReadDeny: tr.config().ReadDeny})
	require.NoError(t, err)
	before := snapshot(t, tr.base)
	for _, p := range []string{"home/.ssh/authorized_keys", "home/.ssh/id_rsa", "home/.aws/config", "home/.netrc"} {
		_, err := f.WriteFile(tr.p(p), []byte("x"))
		requireDenied(t, err, fsfence.ReasonReadDeny)
	}
	require.Equal(t, before, snapshot(t, tr.base))
}

func TestWriteKeepsModeAndOwner(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	p := tr.p("ws/script.sh")
	for _, mode := range []fs.FileMode{0o755, 0o600, 0o444, 0o4755} {
		require.NoError(t, os.Chmod(p, mode))
		_, err := f.WriteFile(p, []byte("#!/bin/sh\n"))
		require.NoError(t, err)
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, mode.Perm(), fi.Mode().Perm()&fs.ModePerm, "mode %o", mode)
		assert.Zero(t, fi.Mode()&fs.ModeSetuid, "setuid is never carried over")
	}
	if os.Geteuid() == 0 {
		require.NoError(t, os.Chown(p, 1234, 5678))
		_, err := f.WriteFile(p, []byte("again"))
		require.NoError(t, err)
		uid, gid := ownerOf(t, p)
		assert.Equal(t, []int{1234, 5678}, []int{uid, gid}, "owner kept")
	}
	assert.Empty(t, tempLeftovers(t, tr.base))
}

// TestWriteFailureLeavesNothing: a failure after the temporary file is
// complete leaves the old content and no temporary file.
func TestWriteFailureLeavesNothing(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	before := snapshot(t, tr.base)
	boom := errors.New("boom")
	restore := fsfence.SetCommitHook(func() error { return boom })
	defer restore()
	for _, p := range []string{"ws/existing.txt", "ws/brand-new.txt"} {
		_, err := f.WriteFile(tr.p(p), []byte("new content"))
		require.ErrorIs(t, err, boom)
	}
	_, err := f.Edit(tr.p("ws/existing.txt"), func([]byte) ([]byte, error) { return []byte("edited"), nil })
	require.ErrorIs(t, err, boom)
	require.Equal(t, before, snapshot(t, tr.base))
	assert.Empty(t, tempLeftovers(t, tr.base))
}

// TestNamedTempFallback: without O_TMPFILE the temporary file has a name;
// it never survives a successful or failed write.
func TestNamedTempFallback(t *testing.T) {
	defer fsfence.ForceNamedTemp()()
	tr := newTree(t)
	f := tr.fence(t)
	res, err := f.WriteFile(tr.p("ws/script.sh"), []byte("new"))
	require.NoError(t, err)
	assert.False(t, res.Created)
	res, err = f.WriteFile(tr.p("ws/fresh.txt"), []byte("new"))
	require.NoError(t, err)
	assert.True(t, res.Created)
	fi, err := os.Stat(tr.p("ws/script.sh"))
	require.NoError(t, err)
	assert.Equal(t, fs.FileMode(0o755), fi.Mode().Perm())
	assert.Empty(t, tempLeftovers(t, tr.base))

	before := snapshot(t, tr.base)
	defer fsfence.SetCommitHook(func() error { return errors.New("boom") })()
	_, err = f.WriteFile(tr.p("ws/script.sh"), []byte("newer"))
	require.Error(t, err)
	require.Equal(t, before, snapshot(t, tr.base))
}

func TestEdit(t *testing.T) {
	t.Run("replaces and keeps mode", func(t *testing.T) {
		tr := newTree(t)
		f := tr.fence(t)
		res, err := f.Edit(tr.p("ws/script.sh"), func(old []byte) ([]byte, error) {
			return []byte(strings.ReplaceAll(string(old), "hi", "hello")), nil
		})
		require.NoError(t, err)
		assert.Equal(t, fsfence.WriteResult{Bytes: len("#!/bin/sh\necho hello\n")}, res)
		data, err := os.ReadFile(tr.p("ws/script.sh"))
		require.NoError(t, err)
		assert.Equal(t, "#!/bin/sh\necho hello\n", string(data))
		fi, err := os.Stat(tr.p("ws/script.sh"))
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o755), fi.Mode().Perm())
		assert.Empty(t, tempLeftovers(t, tr.base))
	})
	t.Run("through a symlink inside", func(t *testing.T) {
		tr := newTree(t)
		f := tr.fence(t)
		_, err := f.Edit(tr.p("ws/relin/file.txt"), func(old []byte) ([]byte, error) { return append(old, '!'), nil })
		require.NoError(t, err)
		data, _ := os.ReadFile(tr.p("ws/sub/file.txt"))
		assert.Equal(t, "sub!", string(data))
		fi, err := os.Lstat(tr.p("ws/relin"))
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode()&fs.ModeSymlink, "the link stays a link")
	})
	t.Run("denied without reading", func(t *testing.T) {
		tr := newTree(t)
		f := tr.fence(t)
		before := snapshot(t, tr.base)
		for _, p := range []string{"ws/.git/config", "ws/cfgalias", "ws/linkfile", "ws/sshlink", "outside/target.txt"} {
			called := false
			_, err := f.Edit(tr.p(p), func(old []byte) ([]byte, error) { called = true; return old, nil })
			requireDenied(t, err, "")
			assert.False(t, called, "%s: the callback saw a denied file", p)
		}
		require.Equal(t, before, snapshot(t, tr.base))
	})
	t.Run("callback error writes nothing", func(t *testing.T) {
		tr := newTree(t)
		f := tr.fence(t)
		before := snapshot(t, tr.base)
		boom := errors.New("old_string not found")
		_, err := f.Edit(tr.p("ws/existing.txt"), func([]byte) ([]byte, error) { return nil, boom })
		require.ErrorIs(t, err, boom)
		require.Equal(t, before, snapshot(t, tr.base))
	})
	t.Run("concurrent change is detected", func(t *testing.T) {
		tr := newTree(t)
		f := tr.fence(t)
		p := tr.p("ws/existing.txt")
		_, err := f.Edit(p, func(old []byte) ([]byte, error) {
			require.NoError(t, os.WriteFile(p, []byte("someone else's longer content"), 0o644))
			return []byte("mine"), nil
		})
		require.ErrorIs(t, err, fsfence.ErrModified)
		data, _ := os.ReadFile(p)
		assert.Equal(t, "someone else's longer content", string(data))
		assert.Empty(t, tempLeftovers(t, tr.base))
	})
}

func TestMkdirAll(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	require.NoError(t, f.MkdirAll(tr.p("ws/x/y/z")))
	require.DirExists(t, tr.p("ws/x/y/z"))
	require.NoError(t, f.MkdirAll(tr.p("ws/x/y/z")), "existing is fine")
	require.NoError(t, f.MkdirAll(tr.ws), "the root itself exists")
	require.NoError(t, f.MkdirAll(tr.p("ws/absin/deeper")))
	require.DirExists(t, tr.p("ws/sub/deeper"))
	require.ErrorIs(t, f.MkdirAll(tr.p("ws/existing.txt")), syscall.ENOTDIR)

	before := snapshot(t, tr.base)
	requireDenied(t, f.MkdirAll(tr.p("ws/.git/hooks/sub")), fsfence.ReasonProtected)
	requireDenied(t, f.MkdirAll(tr.p("ws/.cordon")), fsfence.ReasonProtected)
	requireDenied(t, f.MkdirAll(tr.p("ws/linkout/sub")), fsfence.ReasonSymlinkEscape)
	requireDenied(t, f.MkdirAll(tr.p("ws-evil/sub")), fsfence.ReasonOutsideRoots)
	require.Equal(t, before, snapshot(t, tr.base))
}

func TestRemove(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	before := snapshot(t, tr.base)
	requireDenied(t, f.Remove(tr.p("ws/.git/config")), fsfence.ReasonProtected)
	requireDenied(t, f.Remove(tr.p("ws/.git/hooks/pre-push")), fsfence.ReasonProtected)
	requireDenied(t, f.Remove(tr.p("ws/.git/hooks")), fsfence.ReasonProtected)
	requireDenied(t, f.Remove(tr.p("ws/.profile")), fsfence.ReasonProtected)
	requireDenied(t, f.Remove(tr.p("outside/target.txt")), fsfence.ReasonOutsideRoots)
	requireDenied(t, f.Remove(tr.p("ws/linkout/target.txt")), fsfence.ReasonSymlinkEscape)
	requireDenied(t, f.Remove(tr.ws), fsfence.ReasonRoot)
	require.Equal(t, before, snapshot(t, tr.base))

	require.NoError(t, f.Remove(tr.p("ws/existing.txt")))
	require.NoFileExists(t, tr.p("ws/existing.txt"))
	require.NoError(t, f.Remove(tr.p("ws/linkout")), "a symlink is removed, not followed")
	require.FileExists(t, tr.p("outside/target.txt"))
	require.ErrorIs(t, f.Remove(tr.p("ws/missing")), fs.ErrNotExist)
}

// TestCheckWriteHasNoSideEffects: the approval flow may ask before acting.
func TestCheckWriteHasNoSideEffects(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	before := snapshot(t, tr.base)
	require.NoError(t, f.CheckWrite(tr.p("ws/new/dir/file.txt")))
	require.NoError(t, f.CheckWrite(tr.p("ws/existing.txt")))
	requireDenied(t, f.CheckWrite(tr.p("ws/.cordon/new/file")), fsfence.ReasonProtected)
	requireDenied(t, f.CheckWrite(tr.p("ws/.git/hooks/new/x")), fsfence.ReasonProtected)
	requireDenied(t, f.CheckWrite(tr.p("ws/gitalias/hooks/new/x")), fsfence.ReasonProtected)
	require.Equal(t, before, snapshot(t, tr.base))
}

// TestConcurrentUse: one fence, many goroutines (run with -race).
func TestConcurrentUse(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				p := filepath.Join(tr.ws, "c", string(rune('a'+g)), "f.txt")
				_, err := f.WriteFile(p, []byte{byte(i)})
				assert.NoError(t, err)
				file, err := f.OpenFile(p)
				if assert.NoError(t, err) {
					file.Close()
				}
				_, err = f.WriteFile(tr.p("ws/.git/hooks/x"), nil)
				assert.ErrorIs(t, err, fsfence.ErrDenied)
				_, err = f.OpenFile(tr.p("home/.ssh/id_rsa"))
				assert.ErrorIs(t, err, fsfence.ErrDenied)
			}
		})
	}
	wg.Wait()
	assert.Empty(t, tempLeftovers(t, tr.base))
}

// TestDeepPath: a path near PATH_MAX is created with every component
// checked, in linear rather than quadratic work.
func TestDeepPath(t *testing.T) {
	tr := newTreeIn(t, fastTempDir(t))
	f := tr.fence(t)
	p := tr.ws + "/" + strings.Repeat("d/", 1900) + "x"
	res, err := f.WriteFile(p, []byte("deep"))
	require.NoError(t, err)
	assert.True(t, res.Created)
	file, err := f.OpenFile(p)
	require.NoError(t, err)
	file.Close()
	_, err = f.WriteFile(tr.ws+"/"+strings.Repeat("d/", 900)+strings.Repeat("../", 900)+".cordon/x", nil)
	requireDenied(t, err, fsfence.ReasonProtected)
}
