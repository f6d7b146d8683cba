package sandbox

import "syscall"

// setDeathSignal makes the runner die with cordon, so that no confined
// process outlives the server that was supposed to watch it. A reaping
// helper is not killed so: it would leave its tree behind. It learns of
// cordon's end from its control pipe instead, which the kernel closes when
// cordon exits, and kills the tree itself.
func setDeathSignal(a *syscall.SysProcAttr, reaping bool) {
	if a.Pdeathsig == 0 && !reaping {
		a.Pdeathsig = syscall.SIGKILL
	}
}
