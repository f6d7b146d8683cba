package fsfence_test

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// fastTempDir is a temporary directory on tmpfs when there is one: the
// race is about path resolution, and on a journaling file system every
// flip is a metadata transaction that turns each fsync of the writes into a
// long wait.
func fastTempDir(t *testing.T) string {
	var sfs unix.Statfs_t
	if unix.Statfs("/dev/shm", &sfs) == nil && sfs.Type == unix.TMPFS_MAGIC {
		if dir, err := os.MkdirTemp("/dev/shm", "fsfence-test-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}
