//go:build !linux

package fsfence

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// dirFD is the handle of a [Dir]: an [os.Root] on the directory. Without
// openat2, each child is looked at with Lstat first (a symlink is refused
// there) and opened through the Root, and what was opened must be what was
// looked at (os.Root would follow a symlink swapped in between, within the
// directory).
type dirFD struct{ r *os.Root }

// dirFromTarget opens a Root on the checked directory, which must still be
// the one checked.
func dirFromTarget(t *readTarget) (dirFD, error) {
	r, err := os.OpenRoot(t.realPath)
	if err != nil {
		return dirFD{}, err
	}
	if got, err := r.Stat("."); err != nil || !os.SameFile(got, t.fi) {
		r.Close()
		return dirFD{}, syscall.EAGAIN
	}
	return dirFD{r: r}, nil
}

func (h *dirFD) close() {
	if h.r != nil {
		h.r.Close()
		h.r = nil
	}
}

// look lstats name and requires the type want (a symlink is never it).
func (h *dirFD) look(name string, want fs.FileMode) (fs.FileInfo, error) {
	fi, err := h.r.Lstat(name)
	if err != nil {
		return nil, err
	}
	switch typ := fi.Mode().Type(); {
	case typ == want:
		return fi, nil
	case typ&fs.ModeSymlink != 0:
		return nil, syscall.ELOOP
	case want == fs.ModeDir:
		return nil, syscall.ENOTDIR
	case typ == fs.ModeDir:
		return nil, fmt.Errorf("%w (%s)", ErrNotRegular, kindDir)
	}
	return nil, fmt.Errorf("%w (%s)", ErrNotRegular, kindOther)
}

// openFile opens a regular file in the directory. Its Name is the path the
// fence walked (the Root's), not necessarily Path joined with name.
func (h *dirFD) openFile(name, _ string) (*os.File, opened, error) {
	fi, err := h.look(name, 0)
	if err != nil {
		return nil, opened{}, err
	}
	f, err := h.r.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, opened{}, err
	}
	if got, err := f.Stat(); err != nil || !os.SameFile(got, fi) {
		f.Close()
		return nil, opened{}, syscall.EAGAIN
	}
	return f, opened{id: fileID{fi}}, nil
}

func (h *dirFD) openDir(name string) (dirFD, opened, error) {
	fi, err := h.look(name, fs.ModeDir)
	if err != nil {
		return dirFD{}, opened{}, err
	}
	sub, err := h.r.OpenRoot(name)
	if err != nil {
		return dirFD{}, opened{}, err
	}
	if got, err := sub.Stat("."); err != nil || !os.SameFile(got, fi) {
		sub.Close()
		return dirFD{}, opened{}, syscall.EAGAIN
	}
	return dirFD{r: sub}, opened{id: fileID{fi}}, nil
}

// place: without a kernel view of handles, the path is the one walked
// (each component of which was a directory, not a symlink, when it was
// opened) and the ancestors are the parent's.
func (h *dirFD) place(want string, id fileID, up []fileID) (string, []fileID, error) {
	return want, append([]fileID{id}, up...), nil
}

func (h *dirFD) lstat(name string) (fs.FileInfo, fileID, error) {
	fi, err := h.r.Lstat(name)
	if err != nil {
		return nil, fileID{}, err
	}
	return fi, fileID{fi}, nil
}

func (h *dirFD) list() ([]rawEntry, error) {
	f, err := h.r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	es, err := f.ReadDir(-1)
	out := make([]rawEntry, len(es))
	for i, e := range es {
		out[i] = rawEntry{name: e.Name(), typ: e.Type()}
	}
	return out, err
}
