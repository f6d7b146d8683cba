//go:build unix

package sessionlog

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// flock(2) locks belong to an open file description: two opens of one file
// exclude each other even inside one process, the lock goes away with the
// last descriptor (so with the process, however it dies), and Go's
// close-on-exec opens keep children from inheriting it. fcntl locks have
// none of these properties.

// lockExclusive blocks until this process holds the exclusive lock on f.
func lockExclusive(f *os.File) error { return flock(f, unix.LOCK_EX) }

// unlock releases the lock on f.
func unlock(f *os.File) error { return flock(f, unix.LOCK_UN) }

// tryLock takes a shared or exclusive lock on f without waiting; it reports
// false when another open file description holds a conflicting lock.
func tryLock(f *os.File, exclusive bool) (bool, error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	err := flock(f, how|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lockErr error
	err = rc.Control(func(fd uintptr) {
		for {
			lockErr = unix.Flock(int(fd), how)
			if lockErr != unix.EINTR {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	if lockErr != nil {
		return &os.PathError{Op: "flock", Path: f.Name(), Err: lockErr}
	}
	return nil
}

// syncDir makes a new directory entry in dir durable: without it a crash
// right after Create can lose the whole file, not just its tail.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sessionlog: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sessionlog: syncing %s: %w", dir, err)
	}
	return nil
}
