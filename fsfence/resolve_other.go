//go:build !linux

package fsfence

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// fileID is a file's identity, compared with os.SameFile (device and inode
// on Unix, volume and file index on Windows).
type fileID struct{ fi fs.FileInfo }

func (a fileID) same(b fileID) bool { return a.fi != nil && b.fi != nil && os.SameFile(a.fi, b.fi) }

func fileInfoID(fi fs.FileInfo) fileID { return fileID{fi} }

func statID(p string) (fileID, bool) {
	fi, err := os.Stat(p)
	if err != nil {
		return fileID{}, false
	}
	return fileID{fi}, true
}

// lookPath looks at p without following it, for [resolveEntry] and the
// validation of cached entries.
func lookPath(p string) pathState {
	fi, err := os.Lstat(p)
	if err != nil {
		return pathState{kind: kindMissing}
	}
	s := pathState{id: fileID{fi}}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			return pathState{kind: kindMissing}
		}
		s.kind, s.target = kindSymlink, target
	case fi.IsDir():
		s.kind = kindDir
	case fi.Mode().IsRegular():
		s.kind = kindFile
	default:
		s.kind = kindOther
	}
	return s
}

// platformInit has nothing to prove: os.Root is always available.
func platformInit() error { return nil }

func infoOf(fi fs.FileInfo) entryInfo {
	return entryInfo{
		perm:  fi.Mode().Perm(),
		id:    fileID{fi},
		size:  fi.Size(),
		mtime: fi.ModTime().UnixNano(),
		uid:   -1, // no portable owner: a rewritten file is ours
		gid:   -1,
	}
}

// dirHandle is an [os.Root] on one directory inside a writable root, plus
// the path the fence walked to it. Each step is opened from its parent's
// Root, so — as with the Linux handles — a component swapped for a symlink
// cannot take an operation out of the directory it was opened from.
type dirHandle struct {
	r    *os.Root
	path string
}

func (h *dirHandle) close() {
	if h != nil && h.r != nil {
		h.r.Close()
		h.r = nil
	}
}

// openRoot refuses a root whose path goes through a symlink (see the Linux
// version for why); without openat2 the check is by path.
func openRoot(path string) (*dirHandle, error) {
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, errRootMissing
	}
	if err != nil {
		return nil, err
	}
	if real != path {
		return nil, errRootNotCanonical
	}
	r, err := os.OpenRoot(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, errRootMissing
	}
	if err != nil {
		return nil, err
	}
	return &dirHandle{r: r, path: path}, nil
}

// realPath is the walked path: every component of it was looked at with
// Lstat and was a directory, not a symlink, when it was opened.
func (h *dirHandle) realPath() (string, error) { return h.path, nil }

func (h *dirHandle) lineage() ([]fileID, error) {
	self, err := h.r.Stat(".")
	if err != nil {
		return nil, err
	}
	ids := []fileID{{self}}
	for p := filepath.Dir(h.path); ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil {
			ids = append(ids, fileID{fi})
		}
		if filepath.Dir(p) == p {
			return ids, nil
		}
	}
}

func (h *dirHandle) child(name string) (entry, error) {
	fi, err := h.r.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return entry{kind: kindMissing}, nil
	}
	if err != nil {
		return entry{}, err
	}
	e := entry{info: infoOf(fi)}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		e.kind = kindSymlink
		e.target, err = h.r.Readlink(name)
		return e, err
	case fi.IsDir():
		sub, err := h.r.OpenRoot(name)
		if err != nil {
			return entry{}, err
		}
		// The directory opened must be the one looked at, not a symlink
		// swapped in between (which os.Root would have followed).
		if got, err := sub.Stat("."); err != nil || !os.SameFile(got, fi) {
			sub.Close()
			return entry{}, syscall.EAGAIN
		}
		e.kind, e.dir = kindDir, &dirHandle{r: sub, path: filepath.Join(h.path, name)}
	case fi.Mode().IsRegular():
		e.kind = kindFile
	default:
		e.kind = kindOther
	}
	return e, nil
}

func (h *dirHandle) mkdir(name string) error {
	if err := h.r.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

func (h *dirHandle) openFile(name string) (*os.File, error) {
	return h.r.OpenFile(name, os.O_RDONLY, 0)
}

func (h *dirHandle) remove(name string, _ bool) error { return h.r.Remove(name) }

func (h *dirHandle) syncDir() error {
	d, err := h.r.Open(".")
	if err != nil {
		return nil // not every platform can open a directory for syncing
	}
	defer d.Close()
	_ = d.Sync() // and not every platform can sync one (Windows)
	return nil
}
