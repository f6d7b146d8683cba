package fsfence

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// checkRead opens path for inspection and refuses it when it is, or lies
// beneath, a read-deny entry by any of three views: the lexical path, the
// kernel's view of the opened handle, and the identity of the object and of
// all its ancestors. The caller owns the returned target.
func (f *Fence) checkRead(op, path string) (*readTarget, error) {
	p, err := cleanAbs(path)
	if err != nil {
		return nil, pathErr(op, path, err)
	}
	return f.checkReadClean(op, path, p, f.reads.matcher())
}

func (f *Fence) checkReadClean(op, path, p string, m *matcher) (*readTarget, error) {
	if e, ok := m.pathHit(p); ok {
		return nil, denied(op, path, ReasonReadDeny, e)
	}
	t, err := openForCheck(p, &m.lineages)
	if errors.Is(err, errMagicLink) {
		return nil, &DeniedError{Op: op, Path: path, Reason: ReasonMagicLink, Err: syscall.ELOOP}
	}
	if err != nil {
		return nil, pathErr(op, path, err)
	}
	if e, ok := m.pathHit(t.realPath); ok {
		t.close()
		return nil, denied(op, path, ReasonReadDeny, e)
	}
	if e, ok := m.idHit(t.lineage); ok {
		t.close()
		return nil, denied(op, path, ReasonReadDeny, e)
	}
	if t.procDenied() {
		t.close()
		return nil, denied(op, path, ReasonProcfs, "")
	}
	return t, nil
}

// CheckRead reports whether path may be read (a file) or listed (a
// directory) now, without reading it. The path must exist.
func (f *Fence) CheckRead(path string) error {
	t, err := f.checkRead("read", path)
	if err != nil {
		return err
	}
	t.close()
	return nil
}

// OpenFile opens a regular file for reading. Anything else (a directory, a
// device, a FIFO) is refused with [ErrNotRegular] before it is opened, so a
// FIFO cannot block the server. The returned file is the inode that was
// checked; its Name is the cleaned path.
func (f *Fence) OpenFile(path string) (*os.File, error) {
	file, _, err := f.open("open", path, false)
	return file, err
}

// OpenFileInfo is [Fence.OpenFile] that also returns the file's information
// as of the open, which the fence looks at anyway: a caller that needs the
// size spends no system call on it.
func (f *Fence) OpenFileInfo(path string) (*os.File, fs.FileInfo, error) {
	return f.open("open", path, false)
}

// open is OpenFileInfo, optionally also for directories (the fs.FS view
// needs both).
func (f *Fence) open(op, path string, allowDir bool) (*os.File, fs.FileInfo, error) {
	t, err := f.checkRead(op, path)
	if err != nil {
		return nil, nil, err
	}
	defer t.close()
	if t.kind != kindFile && !(allowDir && t.kind == kindDir) {
		return nil, nil, pathErr(op, path, fmt.Errorf("%w (%s)", ErrNotRegular, t.kind))
	}
	file, fi, err := t.open(filepath.Clean(path))
	if err != nil {
		return nil, nil, pathErr(op, path, err)
	}
	return file, fi, nil
}

// ReadDir lists a directory, sorted by name. Entries are names only: a
// read-deny directory's name still shows in its parent's listing (as it
// does in the shell), but the fence refuses to list or read it.
func (f *Fence) ReadDir(path string) ([]fs.DirEntry, error) {
	t, err := f.checkRead("readdir", path)
	if err != nil {
		return nil, err
	}
	defer t.close()
	if t.kind != kindDir {
		return nil, pathErr("readdir", path, syscall.ENOTDIR)
	}
	// Named by the kernel's path, so that DirEntry.Info looks where the
	// listing came from, not through the caller's symlinks.
	dir, _, err := t.open(t.realPath)
	if err != nil {
		return nil, pathErr("readdir", path, err)
	}
	defer dir.Close()
	entries, err := dir.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	if err != nil {
		return entries, pathErr("readdir", path, err)
	}
	return entries, nil
}

// Stat returns information about the file path names, following symlinks.
// A read-deny path cannot be stat'ed either.
func (f *Fence) Stat(path string) (fs.FileInfo, error) {
	t, err := f.checkRead("stat", path)
	if err != nil {
		return nil, err
	}
	defer t.close()
	fi, err := t.stat(filepath.Base(filepath.Clean(path)))
	if err != nil {
		return nil, pathErr("stat", path, err)
	}
	return fi, nil
}

// Lstat returns information about the file path names without following a
// final symlink (a symlink reports itself). Its directory must be listable
// and the object itself not on the read-deny list.
func (f *Fence) Lstat(path string) (fs.FileInfo, error) {
	t, name, m, err := f.checkParent("lstat", path)
	if err != nil || t == nil {
		if err == nil {
			return f.Stat(path) // "/" has no parent: nothing to not follow
		}
		return nil, err
	}
	defer t.close()
	fi, err := t.lstatAt(name)
	if err != nil {
		return nil, pathErr("lstat", path, err)
	}
	if e, ok := m.idHit([]fileID{fileInfoID(fi)}); ok {
		return nil, denied("lstat", path, ReasonReadDeny, e)
	}
	return fi, nil
}

// ReadLink returns the target of the symlink at path. Its directory must be
// listable and the link itself not on the read-deny list; where the link
// points is not checked (reading a target string reads nothing there).
func (f *Fence) ReadLink(path string) (string, error) {
	t, name, _, err := f.checkParent("readlink", path)
	if err != nil || t == nil {
		if err == nil {
			err = pathErr("readlink", path, syscall.EINVAL)
		}
		return "", err
	}
	defer t.close()
	target, err := t.readlinkAt(name)
	if err != nil {
		return "", pathErr("readlink", path, err)
	}
	return target, nil
}

// checkParent checks path lexically and its directory fully, for the
// operations that look at a name without following it. It returns a nil
// target for "/".
func (f *Fence) checkParent(op, path string) (*readTarget, string, *matcher, error) {
	p, err := cleanAbs(path)
	if err != nil {
		return nil, "", nil, pathErr(op, path, err)
	}
	m := f.reads.matcher()
	if e, ok := m.pathHit(p); ok {
		return nil, "", nil, denied(op, path, ReasonReadDeny, e)
	}
	dir, name := filepath.Split(p)
	if name == "" {
		return nil, "", m, nil
	}
	t, err := f.checkReadClean(op, path, filepath.Clean(dir), m)
	if err != nil {
		return nil, "", nil, err
	}
	if t.kind != kindDir {
		t.close()
		return nil, "", nil, pathErr(op, path, syscall.ENOTDIR)
	}
	// The kernel's view: the directory reached through an alias.
	if e, ok := m.pathHit(filepath.Join(t.realPath, name)); ok {
		t.close()
		return nil, "", nil, denied(op, path, ReasonReadDeny, e)
	}
	return t, name, m, nil
}
