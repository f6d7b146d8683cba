//go:build unix

package fsfence_test

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordonhq/cordon/fsfence"
)

// secrets are the contents of the tree's read-deny files: no read may
// ever return one of them.
var secrets = []string{"SECRET KEY", "AWS SECRET", "NETRC"}

func TestReadDenied(t *testing.T) {
	tests := []struct {
		name   string
		path   func(tr *tree) string
		reason fsfence.Reason
	}{
		{"denied file", func(tr *tree) string { return tr.p("home/.ssh/id_rsa") }, fsfence.ReasonReadDeny},
		{"denied dir", func(tr *tree) string { return tr.p("home/.ssh") }, fsfence.ReasonReadDeny},
		{"denied file entry", func(tr *tree) string { return tr.p("home/.netrc") }, fsfence.ReasonReadDeny},
		{"dotdot into denied", func(tr *tree) string { return tr.ws + "/../home/.aws/credentials" }, fsfence.ReasonReadDeny},
		{"symlink to denied file", func(tr *tree) string { return tr.p("ws/sshlink") }, fsfence.ReasonReadDeny},
		{"symlink to denied dir", func(tr *tree) string { return tr.p("ws/sshdir") }, fsfence.ReasonReadDeny},
		{"through symlinked denied dir", func(tr *tree) string { return tr.p("ws/sshdir/id_rsa") }, fsfence.ReasonReadDeny},
		{"case variant", func(tr *tree) string { return tr.p("home/.SSH/id_rsa") }, fsfence.ReasonReadDeny},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			f := tr.fence(t)
			p := tc.path(tr)
			file, err := f.OpenFile(p)
			requireDenied(t, err, tc.reason)
			require.Nil(t, file)
			_, err = f.ReadDir(p)
			requireDenied(t, err, tc.reason)
			_, err = f.Stat(p)
			requireDenied(t, err, tc.reason)
			requireDenied(t, f.CheckRead(p), tc.reason)
		})
	}
}

func TestReadAllowed(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	read := func(p string) string {
		t.Helper()
		file, err := f.OpenFile(p)
		require.NoError(t, err)
		defer file.Close()
		assert.Equal(t, filepath.Clean(p), file.Name())
		data, err := io.ReadAll(file)
		require.NoError(t, err)
		return string(data)
	}
	assert.Equal(t, "sub", read(tr.p("ws/sub/file.txt")))
	assert.Equal(t, "sub", read(tr.p("ws/relin/file.txt")))
	assert.Equal(t, "outside", read(tr.p("outside/target.txt")), "reads are allowed outside the roots")
	assert.Equal(t, "outside", read(tr.p("ws/linkfile")))
	assert.Equal(t, "[core]\n", read(tr.p("ws/.git/config")), "protected paths are readable")
	assert.Contains(t, read(tr.p("home/.config/cordon/config.toml")), "read-only")

	fi, err := f.Stat(tr.p("ws/script.sh"))
	require.NoError(t, err)
	assert.Equal(t, "script.sh", fi.Name())
	assert.Equal(t, fs.FileMode(0o755), fi.Mode().Perm())
	assert.EqualValues(t, len("#!/bin/sh\necho hi\n"), fi.Size())

	entries, err := f.ReadDir(tr.home)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{".aws", ".config", ".netrc", ".ssh"}, names, "denied names show, their contents do not")
	info, err := entries[3].Info()
	require.NoError(t, err)
	assert.True(t, info.IsDir())

	_, err = f.OpenFile(tr.p("ws/sub"))
	require.ErrorIs(t, err, fsfence.ErrNotRegular)
	_, err = f.OpenFile(tr.p("ws/missing"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.NotErrorIs(t, err, fsfence.ErrDenied)
	_, err = f.ReadDir(tr.p("ws/existing.txt"))
	require.ErrorIs(t, err, syscall.ENOTDIR)
}

func TestReadRefusesSpecialFiles(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	fifo := tr.p("ws/fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	// A FIFO would block the server forever if it were opened for reading.
	_, err := f.OpenFile(fifo)
	require.ErrorIs(t, err, fsfence.ErrNotRegular)
	_, err = f.OpenFile("/dev/null")
	require.ErrorIs(t, err, fsfence.ErrNotRegular)
	_, err = f.WriteFile(fifo, []byte("x"))
	require.ErrorIs(t, err, fsfence.ErrNotRegular)
}

// TestHardLinkToDeniedFile: a hard link is the same inode under another
// name; a read-deny entry that names a file is recognised by identity.
func TestHardLinkToDeniedFile(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	link := tr.p("ws/netrc-copy")
	require.NoError(t, os.Link(tr.p("home/.netrc"), link))
	_, err := f.OpenFile(link)
	requireDenied(t, err, fsfence.ReasonReadDeny)
	_, err = f.Stat(link)
	requireDenied(t, err, fsfence.ReasonReadDeny)
}

// TestLimitationHardLinkInsideDeniedDir pins a documented limit: a hard
// link to a file inside a read-deny directory, made before the fence looks,
// is an ordinary file to it (no inode-to-path lookup exists). If this test
// starts failing because the fence got stronger, update the package doc.
func TestLimitationHardLinkInsideDeniedDir(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	link := tr.p("ws/id_rsa-copy")
	require.NoError(t, os.Link(tr.p("home/.ssh/id_rsa"), link))
	file, err := f.OpenFile(link)
	require.NoError(t, err)
	file.Close()
}

// TestWalkNeverEntersDenied: glob and grep walk through the fence; a
// denied directory is reported and skipped, never listed or read.
func TestWalkNeverEntersDenied(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	var visited, deniedDirs []string
	err := f.WalkDir(tr.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if assert.ErrorIs(t, err, fsfence.ErrDenied, p) {
				deniedDirs = append(deniedDirs, p)
				return nil
			}
			return err
		}
		visited = append(visited, p)
		if d.Type().IsRegular() {
			file, err := f.OpenFile(p)
			if err != nil {
				assert.ErrorIs(t, err, fsfence.ErrDenied, p)
				return nil
			}
			defer file.Close()
			data, _ := io.ReadAll(file)
			for _, s := range secrets {
				assert.NotContains(t, string(data), s, p)
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{tr.p("home/.ssh"), tr.p("home/.aws")}, deniedDirs)
	for _, p := range visited {
		assert.NotContains(t, p, "id_rsa", "walked into a denied directory")
		assert.NotContains(t, p, "credentials")
	}
	assert.Contains(t, visited, tr.p("ws/sub/file.txt"))
}

func TestFS(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	require.NoError(t, os.RemoveAll(tr.p("ws/loop"))) // fstest opens every entry
	require.NoError(t, os.RemoveAll(tr.p("ws/dangling")))
	require.NoError(t, os.RemoveAll(tr.p("ws/procroot")))
	require.NoError(t, os.RemoveAll(tr.p("ws/sshlink")))
	require.NoError(t, os.RemoveAll(tr.p("ws/sshdir")))
	fsys, err := f.FS(tr.ws)
	require.NoError(t, err)
	require.NoError(t, fstest.TestFS(fsys, "sub/file.txt", "script.sh", ".git/config"))

	matches, err := fs.Glob(fsys, "*.txt")
	require.NoError(t, err)
	assert.Equal(t, []string{"existing.txt", "notes.txt"}, matches)

	home, err := f.FS(tr.home)
	require.NoError(t, err)
	_, err = fs.ReadFile(home, ".ssh/id_rsa")
	requireDenied(t, err, fsfence.ReasonReadDeny)
	_, err = fs.ReadDir(home, ".aws")
	requireDenied(t, err, fsfence.ReasonReadDeny)
	_, err = home.Open("../ws/notes.txt")
	require.ErrorIs(t, err, fs.ErrInvalid)
	_, err = f.FS("relative")
	require.ErrorIs(t, err, fsfence.ErrInvalidPath)

	// Reading all of a walk's files never yields a secret.
	err = fs.WalkDir(home, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		data, err := fs.ReadFile(home, p)
		if err == nil {
			for _, s := range secrets {
				assert.False(t, strings.Contains(string(data), s), p)
			}
		}
		return nil
	})
	require.NoError(t, err)
}

func TestLstatAndReadLink(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	require.NoError(t, os.Link(tr.p("home/.netrc"), tr.p("ws/netrc-copy")))
	for _, p := range []string{"home/.ssh", "home/.ssh/id_rsa", "ws/sshdir/id_rsa", "home/.netrc", "ws/netrc-copy"} {
		_, err := f.Lstat(tr.p(p))
		requireDenied(t, err, fsfence.ReasonReadDeny)
		_, err = f.ReadLink(tr.p(p))
		require.Error(t, err)
	}
	fi, err := f.Lstat(tr.p("ws/sshlink"))
	require.NoError(t, err, "a link is not what it points to")
	assert.Equal(t, fs.ModeSymlink, fi.Mode().Type())
	target, err := f.ReadLink(tr.p("ws/sshlink"))
	require.NoError(t, err)
	assert.Equal(t, tr.p("home/.ssh/id_rsa"), target)
	_, err = f.ReadLink(tr.p("ws/notes.txt"))
	require.ErrorIs(t, err, syscall.EINVAL)
	fi, err = f.Lstat("/")
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
}
