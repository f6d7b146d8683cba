package helper

import (
	"os"
	"os/signal"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// discardSignals drops every signal a command could send the zygote: it
// is the pid namespace's init, and the kernel delivers a signal from
// inside the namespace to its init only if the init handles it; Go's
// runtime would end the process on some (SIGTERM, a SIGSEGV sent by
// kill). None is ignored: exec resets a handler to the default, but an
// ignored signal stays ignored in every command the zygote starts —
// SIGTERM, SIGINT and SIGPIPE would then do nothing to them, as they do
// to no cold command.
//
// It does so without os/signal's Notify, whose receiving goroutine and
// signal thread cost two threads of the pids a session is allowed:
//   - a signal Go's handler would die of when another process sends it
//     and nobody listens (killSignals) gets the default disposition
//     instead: the kernel drops it for an init, from inside its namespace
//     and from the host alike (SIGKILL and SIGSTOP from the host alone get
//     through); a command inherits it as it should;
//   - a signal Go takes for a fault (faultSignals) keeps Go's handler, a
//     real fault still panics, and one another process sends is marked
//     ignored in the runtime, which then drops it (signal.Ignore leaves
//     the kernel's disposition of these alone);
//   - every other signal Go's handler drops by itself when nobody
//     listens (SIGPIPE, SIGUSR1, SIGCHLD, the real-time ones).
//
// Under Landlock the zygote is no init: the nested domains keep every
// command's signal from it, but for the moment its forking thread is in
// the command's domain (docs/warm-sandbox.md), when a killSignal ends it
// as SIGKILL already could.
func discardSignals() {
	signal.Ignore(faultSignals...)
	for _, sig := range killSignals {
		rtSigaction(int(sig), &kernelSigaction{}, nil) // all zero: SIG_DFL
	}
}

// killSignals are the signals Go's runtime dies of when one is sent by
// another process and none is listened for (sigtable's _SigKill and
// _SigThrow with _SigNotify).
var killSignals = []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGABRT, syscall.SIGTERM}

// faultSignals are the ones Go's runtime takes for a fault of its own
// (_SigPanic, _SigThrow without _SigNotify): their handler must stay.
var faultSignals = []os.Signal{syscall.SIGILL, syscall.SIGTRAP, syscall.SIGBUS, syscall.SIGFPE,
	syscall.SIGSEGV, syscall.SIGSTKFLT, syscall.SIGSYS}

// ignoreAllSignals makes a helper that starts nothing (the warden) deaf to
// every signal but SIGKILL and SIGSTOP, without a thread of os/signal's.
func ignoreAllSignals() { signal.Ignore() }

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
