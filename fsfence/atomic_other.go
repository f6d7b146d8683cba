//go:build !linux

package fsfence

import (
	"errors"
	"io/fs"
	"os"
)

// writeAtomic replaces (or creates) name through the directory's Root: a
// named temporary file beside the target, written, synced and renamed over
// it. See the Linux version for the reasoning.
func (h *dirHandle) writeAtomic(name string, data []byte, perm fs.FileMode, _ *owner, _ bool) (err error) {
	var tmp *os.File
	var tmpName string
	for range 16 {
		tmpName = tempName()
		tmp, err = h.r.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if tmp != nil {
			tmp.Close()
		}
		if !committed {
			h.r.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	err = tmp.Close()
	tmp = nil
	if err != nil {
		return err
	}
	if hook := testHookBeforeCommit; hook != nil {
		if err := hook(); err != nil {
			return err
		}
	}
	if err := h.r.Rename(tmpName, name); err != nil {
		return err
	}
	committed = true
	return h.syncDir()
}
