package fsfence_test

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/require"
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

// inMountNamespace runs the re-executed child mode with args in a mount
// namespace of its own and returns what it printed. Only root may make
// one, so elsewhere the test is skipped; as root, or under CI (.ci/run
// runs as root and sets CORDON_CI), a child that cannot start fails it.
func inMountNamespace(t *testing.T, mode string, args ...string) string {
	t.Helper()
	cmd := helperCmd(t, mode, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		if os.Geteuid() == 0 {
			t.Fatalf("a child in a new mount namespace failed: %v", err)
		}
		testenv.SkipUnlessCI(t, fmt.Sprintf("not root: cannot run a child in a new mount namespace: %v", err))
	}
	require.NoError(t, err, "child output:\n%s", out)
	return string(out)
}
