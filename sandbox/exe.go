package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// helperBinary is the lean helper that `make build` and `go install
// ./cmd/...` put beside cordon. Without it cordon re-executes itself.
const helperBinary = "cordon-helper"

// helperPath is the executable that confines commands: the lean helper
// beside cordon when it is there and trustworthy, else cordon itself. Both
// take the same arguments after HelperArg.
var helperPath = sync.OnceValues(func() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding cordon's executable: %w", err)
	}
	if sib := filepath.Join(filepath.Dir(self), helperBinary); trustedSibling(sib, self) {
		return sib, nil
	}
	return self, nil
})

// trustedSibling accepts the helper only if it is a regular executable file
// owned by cordon's owner (or root) and writable by nobody else: whoever
// could replace it could unconfine every command.
func trustedSibling(path, self string) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	me, err := os.Stat(self)
	if err != nil {
		return false
	}
	owner, ok1 := fileOwner(fi)
	selfOwner, ok2 := fileOwner(me)
	return ok1 && ok2 && (owner == selfOwner || owner == 0)
}

// helperExe is the helper, opened once. bwrap execs it through this
// descriptor (/proc/self/fd/N inside the sandbox), so it works even when
// the binary lives somewhere the sandbox hides, such as the host's /tmp.
var helperExe = sync.OnceValues(func() (*os.File, error) {
	path, err := helperPath()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the sandbox helper: %w", err)
	}
	return f, nil
})

// helperExePath is the helper's path, for backends that exec it directly
// on the host.
func helperExePath() (string, error) { return helperPath() }
