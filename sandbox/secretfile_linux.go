package sandbox

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openNoSymlinks opens the file at path for reading, failing where any
// component of it is a symlink (O_NONBLOCK: a FIFO must not hang).
func openNoSymlinks(path string) (*os.File, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, &os.PathError{Op: "openat2", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// soleOwnName checks that f is the user's own file and has no other name.
func soleOwnName(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return fmt.Errorf("%s: no owner to check", f.Name())
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s belongs to another user", f.Name())
	case st.Nlink > 1:
		return fmt.Errorf("%s has other names (hard links)", f.Name())
	}
	return nil
}
