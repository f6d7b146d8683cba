//go:build unix

package guard

import "syscall"

// Flags for opening a guarded file: never through a final symlink, never
// blocking on a FIFO.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK
)
