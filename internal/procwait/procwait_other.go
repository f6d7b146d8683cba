//go:build !linux

package procwait

import (
	"os"
	"os/exec"
	"time"
)

// Exit cannot wait without reaping here: it reports false at once, and the
// caller's Wait waits.
func Exit(*os.Process, time.Duration) bool { return false }

// Run is exec.Cmd.Run.
func Run(cmd *exec.Cmd) error { return cmd.Run() }
