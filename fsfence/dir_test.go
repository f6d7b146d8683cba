//go:build unix

package fsfence_test

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordonhq/cordon/fsfence"
)

func openDir(t *testing.T, f *fsfence.Fence, p string) *fsfence.Dir {
	t.Helper()
	d, err := f.OpenDir(p)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return d
}

func names(t *testing.T, d *fsfence.Dir) map[string]fs.FileMode {
	t.Helper()
	entries, err := d.ReadDir()
	require.NoError(t, err)
	out := map[string]fs.FileMode{}
	var prev string
	for _, e := range entries {
		require.Less(t, prev, e.Name(), "sorted by name")
		prev = e.Name()
		out[e.Name()] = e.Type()
	}
	return out
}

func readDirFile(t *testing.T, d *fsfence.Dir, name string) (string, error) {
	t.Helper()
	file, err := d.OpenFile(name)
	if err != nil {
		require.Nil(t, file)
		return "", err
	}
	defer file.Close()
	require.Equal(t, filepath.Join(d.Path(), name), file.Name())
	data, err := io.ReadAll(file)
	require.NoError(t, err)
	for _, s := range secrets {
		require.NotContains(t, string(data), s, "read a secret through %s/%s", d.Path(), name)
	}
	return string(data), nil
}

func TestDirBasics(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	ws := openDir(t, f, tr.ws)
	assert.Equal(t, tr.ws, ws.Path())
	got := names(t, ws)
	assert.Equal(t, fs.FileMode(0), got["existing.txt"])
	assert.Equal(t, fs.ModeDir, got["sub"])
	assert.Equal(t, fs.ModeSymlink, got["linkout"], "symlinks are entries of their own")
	assert.Equal(t, fs.ModeSymlink, got["sshdir"])

	data, err := readDirFile(t, ws, "existing.txt")
	require.NoError(t, err)
	assert.Equal(t, "old", data)
	sub, err := ws.OpenDir("sub")
	require.NoError(t, err)
	defer sub.Close()
	assert.Equal(t, tr.p("ws/sub"), sub.Path())
	data, err = readDirFile(t, sub, "file.txt")
	require.NoError(t, err)
	assert.Equal(t, "sub", data)
	_, err = readDirFile(t, ws, ".git/config")
	require.ErrorIs(t, err, fsfence.ErrInvalidPath)

	fi, err := ws.Lstat("script.sh")
	require.NoError(t, err)
	assert.Equal(t, "script.sh", fi.Name())
	assert.Equal(t, fs.FileMode(0o755), fi.Mode())
	assert.EqualValues(t, len("#!/bin/sh\necho hi\n"), fi.Size())
	want, err := os.Lstat(tr.p("ws/script.sh"))
	require.NoError(t, err)
	ws1, ok1 := want.Sys().(*syscall.Stat_t)
	ws2, ok2 := fi.Sys().(*syscall.Stat_t)
	require.True(t, ok1 && ok2, "Sys is a *syscall.Stat_t, as from the os package")
	assert.Equal(t, [2]uint64{uint64(ws1.Dev), ws1.Ino}, [2]uint64{uint64(ws2.Dev), ws2.Ino}) //nolint:unconvert
	assert.Equal(t, want.ModTime(), fi.ModTime())
	fi, err = ws.Lstat("sshlink")
	require.NoError(t, err, "a link is not what it points to")
	assert.Equal(t, fs.ModeSymlink, fi.Mode().Type())

	_, err = ws.OpenFile("sub")
	require.ErrorIs(t, err, fsfence.ErrNotRegular)
	_, err = ws.OpenDir("existing.txt")
	require.ErrorIs(t, err, syscall.ENOTDIR)
	_, err = ws.OpenFile("missing")
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.NotErrorIs(t, err, fsfence.ErrDenied)
	require.NoError(t, syscall.Mkfifo(tr.p("ws/fifo"), 0o644))
	_, err = ws.OpenFile("fifo") // must not block
	require.ErrorIs(t, err, fsfence.ErrNotRegular)

	for _, name := range []string{"", ".", "..", "sub/file.txt", "../outside", "/etc", "a\x00b"} {
		_, err := ws.OpenFile(name)
		require.ErrorIs(t, err, fsfence.ErrInvalidPath, "%q", name)
		_, err = ws.OpenDir(name)
		require.ErrorIs(t, err, fsfence.ErrInvalidPath, "%q", name)
		_, err = ws.Lstat(name)
		require.ErrorIs(t, err, fsfence.ErrInvalidPath, "%q", name)
	}

	_, err = f.OpenDir(tr.p("ws/existing.txt"))
	require.ErrorIs(t, err, syscall.ENOTDIR)
	_, err = f.OpenDir("relative")
	require.ErrorIs(t, err, fsfence.ErrInvalidPath)
}

// TestDirSymlinkChildren: a child is one name beneath a checked directory
// and is never followed, wherever it points.
func TestDirSymlinkChildren(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	ws := openDir(t, f, tr.ws)
	sub := openDir(t, f, tr.p("ws/sub"))
	for _, c := range []struct {
		d    *fsfence.Dir
		name string
	}{
		{ws, "linkout"}, {ws, "linkfile"}, {ws, "relout"}, {ws, "absin"}, {ws, "relin"},
		{ws, "gitalias"}, {ws, "cfgalias"}, {ws, ".profile"}, {ws, "loop"}, {ws, "procroot"},
		{ws, "sshlink"}, {ws, "sshdir"}, {ws, "dangling"}, {sub, "up"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readDirFile(t, c.d, c.name)
			require.Error(t, err)
			require.True(t, errors.Is(err, syscall.ELOOP), "want ELOOP, got %v", err)
			dir, err := c.d.OpenDir(c.name)
			require.Error(t, err)
			require.Nil(t, dir)
			require.True(t, errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR), "got %v", err)
		})
	}
}

// TestDirReadDeny: read-deny names are not listed and cannot be opened,
// entered or looked at, however the directory was reached.
func TestDirReadDeny(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	require.NoError(t, os.Symlink(tr.home, tr.p("ws/homelink")))
	require.NoError(t, os.Link(tr.p("home/.netrc"), tr.p("ws/netrc-copy")))

	base := openDir(t, f, tr.base)
	homeByName, err := base.OpenDir("home")
	require.NoError(t, err)
	defer homeByName.Close()
	for _, home := range []*fsfence.Dir{openDir(t, f, tr.home), openDir(t, f, tr.p("ws/homelink")), homeByName} {
		t.Run(home.Path(), func(t *testing.T) {
			got := names(t, home)
			assert.Equal(t, map[string]fs.FileMode{".config": fs.ModeDir}, got, "denied names are invisible")
			for _, name := range []string{".ssh", ".aws", ".netrc", ".SSH"} {
				_, err := home.OpenDir(name)
				requireDenied(t, err, fsfence.ReasonReadDeny)
				_, err = home.OpenFile(name)
				requireDenied(t, err, fsfence.ReasonReadDeny)
				_, err = home.Lstat(name)
				requireDenied(t, err, fsfence.ReasonReadDeny)
			}
			var de *fsfence.DeniedError
			_, err := home.OpenDir(".ssh")
			require.True(t, errors.As(err, &de))
			assert.Equal(t, filepath.Join(home.Path(), ".ssh"), de.Path)
			assert.Equal(t, tr.p("home/.ssh"), de.Entry)
		})
	}
	// Known by identity only: the name is listed, nothing else.
	ws := openDir(t, f, tr.ws)
	assert.Contains(t, names(t, ws), "netrc-copy")
	_, err = readDirFile(t, ws, "netrc-copy")
	requireDenied(t, err, fsfence.ReasonReadDeny)
	_, err = ws.Lstat("netrc-copy")
	requireDenied(t, err, fsfence.ReasonReadDeny)
	entries, err := ws.ReadDir()
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() == "netrc-copy" {
			_, err := e.Info()
			requireDenied(t, err, fsfence.ReasonReadDeny)
		}
	}
	// The directories themselves, by path.
	for _, p := range []string{tr.p("home/.ssh"), tr.p("ws/sshdir"), tr.p("ws/homelink/.aws"), tr.p("home/.SSH")} {
		_, err := f.OpenDir(p)
		requireDenied(t, err, fsfence.ReasonReadDeny)
	}
}

// TestDirReadDenyCreatedLater: entering a directory looks at the entries
// again, so one created after the walk began is refused from then on.
func TestDirReadDenyCreatedLater(t *testing.T) {
	tr := newTree(t)
	cfg := tr.config()
	cfg.ReadDeny = append(cfg.ReadDeny, tr.p("home/.kube"))
	f, err := fsfence.New(cfg)
	require.NoError(t, err)
	base := openDir(t, f, tr.base)
	require.NoError(t, os.MkdirAll(tr.p("ws/kube"), 0o755))
	require.NoError(t, os.WriteFile(tr.p("ws/kube/config"), []byte("KUBE SECRET"), 0o600))
	ws, err := base.OpenDir("ws")
	require.NoError(t, err)
	defer ws.Close()
	// ~/.kube becomes a symlink to ws/kube: ws/kube is now its resolved form.
	require.NoError(t, os.Symlink(tr.p("ws/kube"), tr.p("home/.kube")))
	_, err = ws.OpenDir("kube")
	requireDenied(t, err, fsfence.ReasonReadDeny)
	_, err = f.OpenDir(tr.p("ws/kube"))
	requireDenied(t, err, fsfence.ReasonReadDeny)
}

// TestDirSwappedForSymlink: a Dir is the directory that was checked; a
// swap of its name (or of a child's) for a symlink after the check takes
// nothing anywhere else.
func TestDirSwappedForSymlink(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	ws := openDir(t, f, tr.ws)
	sub, err := ws.OpenDir("sub")
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, os.Rename(tr.p("ws/sub"), tr.p("ws/sub.old")))
	require.NoError(t, os.Symlink(tr.p("home/.ssh"), tr.p("ws/sub")))
	require.NoError(t, os.WriteFile(tr.p("ws/notes.txt.new"), []byte("x"), 0o644))

	data, err := readDirFile(t, sub, "file.txt")
	require.NoError(t, err, "the handle follows the checked inode")
	assert.Equal(t, "sub", data)
	_, err = readDirFile(t, sub, "id_rsa")
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Equal(t, map[string]fs.FileMode{"file.txt": 0, "up": fs.ModeSymlink}, names(t, sub))
	_, err = ws.OpenDir("sub")
	require.True(t, errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR), "got %v", err)
	_, err = readDirFile(t, ws, "sub")
	require.ErrorIs(t, err, syscall.ELOOP)

	// A file swapped for a symlink between the listing and the open.
	require.Equal(t, fs.FileMode(0), names(t, ws)["notes.txt"])
	require.NoError(t, os.Remove(tr.p("ws/notes.txt")))
	require.NoError(t, os.Symlink(tr.p("home/.ssh/id_rsa"), tr.p("ws/notes.txt")))
	_, err = readDirFile(t, ws, "notes.txt")
	require.ErrorIs(t, err, syscall.ELOOP)
}

// TestDirClosed: a closed Dir refuses every call, and Close waits for the
// calls in progress (run with -race).
func TestDirClosed(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	d, err := f.OpenDir(tr.ws)
	require.NoError(t, err)
	entries, err := d.ReadDir()
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				file, err := d.OpenFile("existing.txt")
				if err != nil {
					assert.ErrorIs(t, err, fs.ErrClosed)
					return
				}
				file.Close()
			}
		})
	}
	require.NoError(t, d.Close())
	wg.Wait()
	require.ErrorIs(t, d.Close(), fs.ErrClosed)
	_, err = d.ReadDir()
	require.ErrorIs(t, err, fs.ErrClosed)
	_, err = d.OpenFile("existing.txt")
	require.ErrorIs(t, err, fs.ErrClosed)
	_, err = d.OpenDir("sub")
	require.ErrorIs(t, err, fs.ErrClosed)
	_, err = entries[0].Info()
	require.ErrorIs(t, err, fs.ErrClosed)
}

// TestWalkDirSkip: Fence.WalkDir keeps fs.WalkDir's protocol.
func TestWalkDirSkip(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	var seen []string
	err := f.WalkDir(tr.ws, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(tr.ws, p)
		seen = append(seen, rel)
		switch rel {
		case ".git":
			return fs.SkipDir
		case "notes.txt":
			return fs.SkipDir // in a directory: skips the rest of it
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{".", ".git", ".profile", "absin", "cfgalias", "config-hardlink", "dangling", "existing.txt",
		"gitalias", "linkfile", "linkout", "loop", "notes.txt"}, seen)
	err = f.WalkDir(tr.p("ws/existing.txt"), func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		assert.Equal(t, tr.p("ws/existing.txt"), p)
		assert.False(t, d.IsDir())
		return fs.SkipAll
	})
	require.NoError(t, err)
	err = f.WalkDir(tr.p("ws/missing"), func(p string, d fs.DirEntry, err error) error { return err })
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// dirWalkRead walks d with the Dir API alone, reading every file it can,
// and closes it. It returns what it read, by path.
func dirWalkRead(d *fsfence.Dir) map[string]string {
	out := map[string]string{}
	defer d.Close()
	entries, _ := d.ReadDir()
	for _, e := range entries {
		switch {
		case e.IsDir():
			if sub, err := d.OpenDir(e.Name()); err == nil {
				maps.Copy(out, dirWalkRead(sub))
			}
		case e.Type().IsRegular():
			if file, err := d.OpenFile(e.Name()); err == nil {
				data, _ := io.ReadAll(file)
				file.Close()
				out[file.Name()] = string(data)
			}
		}
	}
	return out
}
