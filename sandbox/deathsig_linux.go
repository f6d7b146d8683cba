package sandbox

import "syscall"

// setDeathSignal makes the runner die with cordon, so that no confined
// process outlives the server that was supposed to watch it.
func setDeathSignal(a *syscall.SysProcAttr) {
	if a.Pdeathsig == 0 {
		a.Pdeathsig = syscall.SIGKILL
	}
}
