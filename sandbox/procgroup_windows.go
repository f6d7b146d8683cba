package sandbox

import (
	"os"
	"syscall"
)

// leadGroup: the windows-acl runner puts the command in a kill-on-close
// job object, which takes the whole tree with it.
func leadGroup(*syscall.SysProcAttr) {}

// killRunner kills the runner; its job object takes the rest.
func killRunner(p *os.Process, _ bool) { p.Kill() }
