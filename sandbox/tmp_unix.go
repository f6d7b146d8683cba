//go:build unix

package sandbox

import (
	"fmt"
	"os"

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
