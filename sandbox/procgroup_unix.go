//go:build unix

package sandbox

import (
	"os"
	"syscall"
)

// leadGroup makes the runner lead a process group of its own.
func leadGroup(a *syscall.SysProcAttr) { a.Setpgid = true }

// killRunner kills the runner, and its whole group when it leads one.
func killRunner(p *os.Process, group bool) {
	if group {
		syscall.Kill(-p.Pid, syscall.SIGKILL)
		return
	}
	p.Kill()
}
