//go:build !linux

package sandbox

import (
	"os"
	"syscall"
)

// signalTree sends sig to a launched command (see Process.Signal): its
// process group where it leads one.
func signalTree(_ string, pid int, group bool, sig syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	_ = group
	return p.Signal(sig)
}
