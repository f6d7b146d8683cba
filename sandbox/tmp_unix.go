//go:build unix

package sandbox

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// lockDir takes a shared flock on the directory itself (no lock file that
// could be deleted or planted). The descriptor is close-on-exec, so
// confined commands never inherit it.
func lockDir(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return f, nil
}

// removeIfUnlocked takes the directory's lock without following a symlink,
// checks that the path still names the inode it opened, and removes it.
func removeIfUnlocked(path string, seen os.FileInfo) bool {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return false // a live session holds it
	}
	var opened unix.Stat_t
	if unix.Fstat(fd, &opened) != nil {
		return false
	}
	now, err := os.Lstat(path)
	if err != nil || !now.IsDir() || !os.SameFile(now, seen) {
		return false
	}
	st, ok := now.Sys().(*syscall.Stat_t)
	if !ok || st.Dev != opened.Dev || st.Ino != opened.Ino {
		return false
	}
	return os.RemoveAll(path) == nil
}
