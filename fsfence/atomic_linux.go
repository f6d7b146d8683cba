//go:build linux

package fsfence

import (
	"io/fs"
	"strconv"

	"golang.org/x/sys/unix"
)

// writeAtomic replaces (or creates) name in the directory with data so that
// a crash at any point leaves either the old file or the complete new one.
// Every step is relative to the directory handle the fence checked: the
// temporary file, the link and the rename cannot be redirected by a path
// swapped in meanwhile.
func (h *dirHandle) writeAtomic(name string, data []byte, perm fs.FileMode, own *owner, replace bool) (err error) {
	fd, tmpName, err := h.createTemp()
	if err != nil {
		return err
	}
	defer func() {
		unix.Close(fd)
		if err != nil && tmpName != "" {
			unix.Unlinkat(h.fd, tmpName, 0)
		}
	}()
	if err := writeAll(fd, data); err != nil {
		return err
	}
	// Explicit mode: the creation mode passed through the umask.
	if err := unix.Fchmod(fd, uint32(perm)); err != nil {
		return err
	}
	if own != nil {
		// Keep the owner when we can (root rewriting a user's file);
		// otherwise the file is ours, as with any editor's save.
		if err := unix.Fchown(fd, own.uid, own.gid); err != nil && err != unix.EPERM {
			return err
		}
	}
	if err := unix.Fsync(fd); err != nil {
		return err
	}
	if hook := testHookBeforeCommit; hook != nil {
		if err := hook(); err != nil {
			return err
		}
	}
	if tmpName == "" { // anonymous O_TMPFILE: give it a name first
		procPath := "/proc/self/fd/" + strconv.Itoa(fd)
		if !replace {
			// A new file can get its final name directly: atomic, and
			// nothing is ever left behind. EEXIST means it appeared
			// meanwhile; replace it like any other.
			err := unix.Linkat(unix.AT_FDCWD, procPath, h.fd, name, unix.AT_SYMLINK_FOLLOW)
			if err == nil {
				return h.syncDir()
			}
			if err != unix.EEXIST {
				return err
			}
		}
		for range 16 {
			cand := tempName()
			err = unix.Linkat(unix.AT_FDCWD, procPath, h.fd, cand, unix.AT_SYMLINK_FOLLOW)
			if err == nil {
				tmpName = cand
				break
			}
			if err != unix.EEXIST {
				return err
			}
		}
		if tmpName == "" {
			return err
		}
	}
	if err := unix.Renameat(h.fd, tmpName, h.fd, name); err != nil {
		return err
	}
	tmpName = "" // renamed: nothing to clean up any more
	return h.syncDir()
}

// createTemp makes the file the data is written to: an anonymous
// O_TMPFILE where the file system supports it (a crash leaves nothing
// behind), else a named, exclusive, never-followed temporary file.
func (h *dirHandle) createTemp() (fd int, tmpName string, err error) {
	err = unix.EOPNOTSUPP
	if !testForceNamedTemp {
		fd, err = unix.Openat(h.fd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	}
	if err == nil {
		return fd, "", nil
	}
	if err != unix.EOPNOTSUPP && err != unix.EISDIR && err != unix.EINVAL {
		return -1, "", err
	}
	for range 16 {
		name := tempName()
		fd, err = unix.Openat(h.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == nil {
			return fd, name, nil
		}
		if err != unix.EEXIST {
			return -1, "", err
		}
	}
	return -1, "", err
}

func writeAll(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}
