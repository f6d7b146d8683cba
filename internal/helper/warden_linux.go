package helper

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Under Landlock there is no pid namespace whose end kills every process
// of a call at once, and the reaper outside the sandbox sees the command's
// tree only through /proc: a walk that a tree forking and exiting as it is
// walked can outrun. So from ABI 6 (signal scoping) the sandbox carries a
// warden. The confining helper, once confined, starts it and then puts
// itself — and so the command (or the warm sandbox's zygote) and
// everything it starts — in a Landlock domain of its own beneath the
// policy's, that only scopes signals and abstract sockets:
//
//	reaper (outside) ─┬─ confining helper ─exec→ command (domain D2 ⊂ D1)
//	                  └─ warden (domain D1), started by the confining helper
//
// The warden is the one process left in the policy's domain D1. Nothing of
// the command can signal, trace or read it: D1 is a parent domain of D2.
// When the reaper closes the warden's pipe — the command ended, cordon
// ended the call, or the reaper itself is gone — the warden sends
// kill(-1, SIGKILL), which scoping keeps to its own domain and the ones
// beneath it: every process the command started, however deep, in one
// system call that no fork can slip past. Then it exits, and the reaper
// reaps until none is left.

// wardenArg is the helper's start as a warden: wardenArg REAPER-PID, with
// the pipe as its standard input.
const wardenArg = "--warden"

// startWarden starts the warden from the calling (confined) thread, with
// pipe as its standard input, and closes pipe: the warden inherits the
// thread's Landlock domain, seccomp filter and empty capability sets. It
// runs beside the command; it need not be up before the command starts,
// since nothing of the command can reach it. It returns the warden's pid.
func startWarden(pipe int) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("starting the warden: %w", err)
	}
	pid, err := syscall.ForkExec(exe, []string{exe, Arg, wardenArg, strconv.Itoa(os.Getppid())}, &syscall.ProcAttr{
		Env:   helperEnv,
		Files: []uintptr{uintptr(pipe)},
		// The reaper's child, not the command's: a command (a warm
		// sandbox's zygote above all) waits for its children to end. In
		// a session of its own, so that no signal of the command's
		// terminal (^C, a hang-up) reaches it.
		Sys: &syscall.SysProcAttr{Cloneflags: unix.CLONE_PARENT, Setsid: true},
	})
	unix.Close(pipe)
	if err != nil {
		return 0, fmt.Errorf("starting the warden: %w", err)
	}
	return pid, nil
}

// nestScope puts the calling thread in a Landlock domain of its own
// beneath its current one, that handles no access and only scopes signals
// and abstract unix sockets: its processes can no longer signal the
// warden's domain above.
func nestScope() error {
	attr := llsyscall.RulesetAttr{Scoped: llsyscall.ScopeSignal | llsyscall.ScopeAbstractUnixSocket}
	fd, err := llsyscall.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("nesting the command's Landlock domain: %w", err)
	}
	defer unix.Close(fd)
	if err := llsyscall.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("nesting the command's Landlock domain: %w", err)
	}
	return nil
}

// serveWarden is the warden: it waits for its pipe to close, kills every
// process of its domain and the ones beneath it, and exits. It never
// returns.
func serveWarden(reaperArg string) {
	reaper, err := strconv.Atoi(reaperArg)
	if err != nil || reaper < 2 {
		os.Exit(125)
	}
	// Not dumpable, as every helper that outlives its start; and deaf to
	// every signal it can drop: only the host may end it. It starts
	// nothing, so nothing inherits what it ignores.
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	ignoreAllSignals()
	// Without scoping kill(-1) would reach every process of the user: the
	// warden must fail to signal the reaper, outside its domain, or it
	// kills nothing (the reaper's own walk is then all there is).
	if err := unix.Kill(reaper, 0); !errors.Is(err, unix.EPERM) {
		os.Exit(125)
	}
	var b [1]byte
	for {
		n, err := unix.Read(0, b[:])
		if err == unix.EINTR || err == nil && n > 0 {
			continue
		}
		break // closed
	}
	unix.Kill(-1, unix.SIGKILL)
	os.Exit(0)
}
