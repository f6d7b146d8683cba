//go:build !linux

package fsfence

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// readTarget is a path checked for reading. Without O_PATH and a kernel
// view of handles, the check is by path and by identity, and open verifies
// that what it opened is what was checked.
type readTarget struct {
	realPath string
	fi       fs.FileInfo
	info     entryInfo
	kind     kind
	lineage  []fileID
}

func openForCheck(path string, _ *lineageCache) (*readTarget, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	if again, err := os.Stat(real); err != nil || !os.SameFile(again, fi) {
		return nil, syscall.EAGAIN
	}
	t := &readTarget{realPath: real, fi: fi, info: infoOf(fi), kind: kindOther}
	switch {
	case fi.IsDir():
		t.kind = kindDir
	case fi.Mode().IsRegular():
		t.kind = kindFile
	}
	t.lineage = []fileID{{fi}}
	for p := filepath.Dir(real); ; p = filepath.Dir(p) {
		if pfi, err := os.Stat(p); err == nil {
			t.lineage = append(t.lineage, fileID{pfi})
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	return t, nil
}

func (t *readTarget) open(name string) (*os.File, fs.FileInfo, error) {
	f, err := os.Open(t.realPath)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil || !os.SameFile(fi, t.fi) {
		f.Close()
		return nil, nil, syscall.EAGAIN
	}
	return f, fi, nil
}

func (t *readTarget) stat(string) (fs.FileInfo, error) { return t.fi, nil }

func (t *readTarget) lstatAt(name string) (fs.FileInfo, error) {
	return os.Lstat(filepath.Join(t.realPath, name))
}

func (t *readTarget) readlinkAt(name string) (string, error) {
	return os.Readlink(filepath.Join(t.realPath, name))
}

func (t *readTarget) close() {}

// procDenied: there is no procfs to refuse outside Linux.
func (t *readTarget) procDenied() bool { return false }

// procPathDenied: there is no procfs outside Linux.
func procPathDenied(string) bool { return false }
