//go:build !unix

package sessionlog

import (
	"os"
	"sync"
)

// Without flock(2) nothing is coordinated across processes: appends from two
// processes may break the chain, and no session is ever seen as live. One
// mutex at least keeps writers in this process, whatever Log they use, from
// interleaving. cordon's sandbox backends exist only on Linux and macOS;
// this file keeps the package building elsewhere.
var appendMu sync.Mutex

func lockExclusive(*os.File) error {
	appendMu.Lock()
	return nil
}

func unlock(*os.File) error {
	appendMu.Unlock()
	return nil
}

// tryLock always succeeds: liveness cannot be observed here.
func tryLock(*os.File, bool) (bool, error) { return true, nil }

// syncDir does nothing: not every platform can fsync a directory, and
// those that need it are unix.
func syncDir(string) error { return nil }
