//go:build unix

package testenv

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// Snapshot records every entry beneath dir (type, mode, size, content
// hash, link target) without following symlinks, so a test can prove the
// file system did not change.
func Snapshot(t testing.TB, dirs ...string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				snap[p] = "error: " + err.Error()
				return nil
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return nil
			}
			desc := fmt.Sprintf("%v %d", fi.Mode(), fi.Size())
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				target, _ := os.Readlink(p)
				desc += " -> " + target
			case fi.Mode().IsRegular():
				data, _ := os.ReadFile(p)
				desc += fmt.Sprintf(" %x", sha256.Sum256(data))
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				desc += fmt.Sprintf(" nlink=%d", st.Nlink)
			}
			snap[p] = desc
			return nil
		})
	}
	return snap
}

// Git runs git in dir with an identity and defaults of its own, failing
// the test when git fails, and returns what it printed.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// ReadFile is what p holds, or "" when it cannot be read.
func ReadFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}
