//go:build unix

package sandbox

import (
	"sync"

	"golang.org/x/sys/unix"
)

func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || err == unix.EPERM
}

var cleanedStateDirs sync.Map

// cleanStaleOnce runs CleanStaleStubs once per state directory and process.
func cleanStaleOnce(stateDir string) {
	if _, done := cleanedStateDirs.LoadOrStore(stateDir, true); !done {
		CleanStaleStubs(stateDir)
	}
}
