package fsfence

import (
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"syscall"
)

// WriteResult reports what a write did.
type WriteResult struct {
	Created bool // the file did not exist before
	Bytes   int  // bytes written
}

// MaxEditSize is the largest file [Fence.Edit] reads into memory.
const MaxEditSize = 64 << 20

// CheckWrite reports whether WriteFile(path, ...) would be allowed now,
// without creating or changing anything (the approval flow asks before any
// side effect). Missing parent directories are fine if they could be made.
func (f *Fence) CheckWrite(path string) error {
	r, err := f.resolveWrite("write", path, resolveMode{followFinal: true, probe: true})
	r.close()
	return err
}

// WriteFile atomically replaces the regular file at path with data, or
// creates it (mode 0644) along with any missing parent directories (0755,
// before the umask). An existing file keeps its permission bits (setuid,
// setgid and sticky bits are dropped) and, where allowed, its owner. A
// symlink at path is followed, and checked where it leads.
func (f *Fence) WriteFile(path string, data []byte) (WriteResult, error) {
	r, err := f.resolveWrite("write", path, resolveMode{create: true, followFinal: true})
	if err != nil {
		return WriteResult{}, err
	}
	defer r.close()
	perm, own, exists := fs.FileMode(0o644), (*owner)(nil), false
	switch r.ent.kind {
	case kindMissing:
	case kindFile:
		perm, exists = r.ent.info.perm, true
		if r.ent.info.uid >= 0 {
			own = &owner{r.ent.info.uid, r.ent.info.gid}
		}
	case kindDir:
		return WriteResult{}, pathErr("write", path, syscall.EISDIR)
	default:
		return WriteResult{}, pathErr("write", path, fmt.Errorf("%w (%s)", ErrNotRegular, r.ent.kind))
	}
	if err := r.dir.writeAtomic(r.name, data, perm, own, exists); err != nil {
		return WriteResult{}, pathErr("write", path, err)
	}
	return WriteResult{Created: !exists, Bytes: len(data)}, nil
}

// Edit reads the regular file at path, passes its content to fn and
// atomically replaces the file with fn's result, keeping its mode, all
// through one resolution of the path (the file read is the file replaced).
// If fn fails, nothing is written and its error is returned as is. If the
// file changes on disk while fn runs, nothing is written and the error
// matches [ErrModified]. Files larger than [MaxEditSize] are refused with
// [ErrTooLarge].
func (f *Fence) Edit(path string, fn func(old []byte) ([]byte, error)) (WriteResult, error) {
	const op = "edit"
	r, err := f.resolveWrite(op, path, resolveMode{followFinal: true})
	if err != nil {
		return WriteResult{}, err
	}
	defer r.close()
	switch r.ent.kind {
	case kindFile:
	case kindMissing:
		return WriteResult{}, pathErr(op, path, syscall.ENOENT)
	case kindDir:
		return WriteResult{}, pathErr(op, path, syscall.EISDIR)
	default:
		return WriteResult{}, pathErr(op, path, fmt.Errorf("%w (%s)", ErrNotRegular, r.ent.kind))
	}
	old, before, err := r.readForEdit(r.ent.info)
	if err != nil {
		return WriteResult{}, pathErr(op, path, err)
	}
	data, err := fn(old)
	if err != nil {
		return WriteResult{}, err
	}
	now, err := r.dir.child(r.name)
	now.dir.close()
	if err != nil {
		return WriteResult{}, pathErr(op, path, err)
	}
	if now.kind != kindFile || !now.info.sameState(before) {
		return WriteResult{}, pathErr(op, path, ErrModified)
	}
	info := r.ent.info
	var own *owner
	if info.uid >= 0 {
		own = &owner{info.uid, info.gid}
	}
	if err := r.dir.writeAtomic(r.name, data, info.perm, own, true); err != nil {
		return WriteResult{}, pathErr(op, path, err)
	}
	return WriteResult{Bytes: len(data)}, nil
}

// readForEdit reads the checked file through the checked directory and
// returns its content and its state as read, for the caller to compare
// with before it writes.
func (r *resolved) readForEdit(want entryInfo) ([]byte, entryInfo, error) {
	file, err := r.dir.openFile(r.name)
	if err != nil {
		return nil, entryInfo{}, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, entryInfo{}, err
	}
	if !fi.Mode().IsRegular() || !fileInfoID(fi).same(want.id) {
		return nil, entryInfo{}, ErrModified
	}
	if fi.Size() > MaxEditSize {
		return nil, entryInfo{}, fmt.Errorf("%w: %d bytes (the limit is %d)", ErrTooLarge, fi.Size(), MaxEditSize)
	}
	data, err := io.ReadAll(io.LimitReader(file, MaxEditSize+1))
	if err != nil {
		return nil, entryInfo{}, err
	}
	if len(data) > MaxEditSize {
		return nil, entryInfo{}, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, MaxEditSize)
	}
	// The state after reading, so a write racing the read is noticed too.
	again, err := r.dir.child(r.name)
	again.dir.close()
	if err != nil {
		return nil, entryInfo{}, err
	}
	if again.kind != kindFile || !again.info.id.same(want.id) {
		return nil, entryInfo{}, ErrModified
	}
	return data, again.info, nil
}

// MkdirAll creates the directory at path and any missing parents (0755,
// before the umask), each checked before it is made. An existing directory
// is not an error; a symlink to one is followed and checked.
func (f *Fence) MkdirAll(path string) error {
	const op = "mkdir"
	r, err := f.resolveWrite(op, path, resolveMode{create: true, followFinal: true})
	if err != nil {
		return err
	}
	defer r.close()
	switch r.ent.kind {
	case kindDir:
		return nil
	case kindMissing:
		if err := r.dir.mkdir(r.name); err != nil {
			return pathErr(op, path, err)
		}
		now, err := r.dir.child(r.name)
		now.dir.close()
		if err != nil {
			return pathErr(op, path, err)
		}
		if now.kind != kindDir {
			return pathErr(op, path, syscall.EEXIST)
		}
		return nil
	default:
		return pathErr(op, path, syscall.ENOTDIR)
	}
}

// Remove removes the file, symlink (not its target) or empty directory at
// path. A writable root itself is never removed.
func (f *Fence) Remove(path string) error {
	const op = "remove"
	r, err := f.resolveWrite(op, path, resolveMode{})
	if err != nil {
		return err
	}
	defer r.close()
	switch {
	case r.name == "":
		return denied(op, path, ReasonRoot, filepath.Clean(path))
	case r.ent.kind == kindMissing:
		return pathErr(op, path, syscall.ENOENT)
	}
	if err := r.dir.remove(r.name, r.ent.kind == kindDir); err != nil {
		return pathErr(op, path, err)
	}
	return nil
}
