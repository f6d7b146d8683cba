package helper

import (
	"os"
	"os/signal"
	"unsafe"

	"golang.org/x/sys/unix"
)

// discardSignals takes every signal a command could send the zygote and
// drops it: it is the pid namespace's init, and the kernel delivers a
// signal from inside the namespace to its init only if the init handles
// it; Go's runtime would end the process on most (SIGTERM, a SIGSEGV sent
// by kill). They are handled, not ignored: exec resets a handler to the
// default, but an ignored signal stays ignored in every command the zygote
// starts — SIGTERM, SIGINT and SIGPIPE would then do nothing to them, as
// they do to no cold command.
func discardSignals() {
	signals := make(chan os.Signal, 16)
	signal.Notify(signals) // every signal but SIGKILL and SIGSTOP
	go func() {
		for range signals {
		}
	}()
}

// resetIgnoredSignals sets every signal this process inherited as ignored
// back to its default, so that the command it execs (or forks) starts with
// the dispositions of a fresh process, whatever ignored them in cordon's
// ancestry: `nohup`, a service manager, a CI runner (one ignores signal
// 32). Exec keeps an ignored signal ignored; it resets only handled ones,
// which Go's handlers are, so a signal Go handles is left alone.
func resetIgnoredSignals() {
	for sig := 1; sig < 65; sig++ {
		var old kernelSigaction
		if rtSigaction(sig, nil, &old) != nil || old[0] != sigIgn {
			continue
		}
		rtSigaction(sig, &kernelSigaction{}, nil) // all zero: SIG_DFL
	}
}

const sigIgn = 1

// kernelSigaction is room for the kernel's struct sigaction on every
// architecture; its first word is sa_handler, and all zero it is SIG_DFL
// with no flags and an empty mask.
type kernelSigaction [8]uintptr

// rtSigaction is rt_sigaction(2) with the 64-signal set size of every
// architecture the helper confines on. MIPS, whose struct puts sa_flags
// first and whose set is 128 signals, refuses it with EINVAL, so nothing
// there is misread or reset (seccomp fails closed there anyway).
func rtSigaction(sig int, act, old *kernelSigaction) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig),
		uintptr(unsafe.Pointer(act)), uintptr(unsafe.Pointer(old)), 8, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
