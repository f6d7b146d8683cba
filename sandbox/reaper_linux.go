package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Under Landlock there is no pid namespace whose end takes every process
// with it: a command's `setsid -f`, `nohup … &` or double-forked daemon
// would outlive the call, keep the mode it started with after the session
// narrows, and keep the human's terminal. So the helper does not exec the
// command but starts it and stays as its parent and child subreaper: every
// orphan of the tree is reparented to it rather than to init. When the
// command exits — or cordon closes the control pipe (a timeout, a
// cancellation, cordon itself gone) — the helper kills everything left,
// reaps it, and exits as the command did.
//
// The helper is confined like the command (it confined itself before
// starting it) and made non-dumpable, so that the command can neither
// ptrace it nor write its memory through /proc to keep it from reaping.

// forwardedSignals are passed on to the command, so that `cordon exec`
// behaves like the command itself.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH}

// reap runs the command as a child and returns the helper's exit code once
// nothing of the command is left. Where the command was killed by a
// signal, the helper kills itself with the same one.
func reap(cfg helperConfig, path string, lookErr error, status *os.File) int {
	control := os.NewFile(uintptr(cfg.reapFD), "control")
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return failStarting(status, fmt.Errorf("becoming a child subreaper: %w", err))
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return failStarting(status, fmt.Errorf("making the helper non-dumpable: %w", err))
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, forwardedSignals...)
	if status != nil {
		status.WriteString(statusStarted)
		status.Close()
	}
	if lookErr != nil {
		fmt.Fprintf(os.Stderr, "cordon: %s: command not found\n", cfg.argv[0])
		return 127
	}
	pid, err := syscall.ForkExec(path, cfg.argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		// The helper's locked thread forked it: should the helper die, so
		// does the command (its descendants are killed by nobody then,
		// which is why cordon never kills the helper but asks it).
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "cordon: %s: %v\n", cfg.argv[0], err)
		if errors.Is(err, unix.ENOENT) {
			return 127
		}
		return 126
	}
	// One loop reaps every child (the command, and each orphan handed
	// to the helper); once the command has exited, or cordon has closed
	// the control pipe, every reaped process is a cue to kill what is left,
	// since its own children have just become the helper's.
	var ending atomic.Bool
	if control != nil {
		go func() {
			var b [1]byte
			control.Read(b[:]) // returns when cordon closes its end
			ending.Store(true)
			killChildren()
		}()
	}
	go func() {
		for s := range signals {
			if !ending.Load() {
				unix.Kill(pid, s.(syscall.Signal))
			}
		}
	}()
	var exit unix.WaitStatus
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			break // ECHILD: nothing of the command is left
		}
		if got == pid {
			exit = ws
			ending.Store(true)
		}
		if ending.Load() {
			killChildren()
		}
	}
	if exit.Signaled() {
		sig := exit.Signal()
		signal.Reset(sig)
		unix.Kill(os.Getpid(), sig)
		return 128 + int(sig) // a signal that does not kill (never reached)
	}
	return exit.ExitStatus()
}

func failStarting(status *os.File, err error) int {
	if status != nil {
		fmt.Fprintf(status, "%s%v", statusError, err)
	}
	fmt.Fprintf(os.Stderr, "cordon: sandbox runner failed: %v\n", err)
	return 125
}

// killChildren kills every child of the helper. A process cannot fork once
// SIGKILL is pending, and the children of each one killed become the
// helper's, to be killed when the reaping loop sees their parent go.
func killChildren() {
	for _, k := range children() {
		unix.Kill(k, unix.SIGKILL)
	}
}

// children lists the helper's children: the /proc/self/task/*/children
// files (every thread's, for a reparented orphan may belong to any), or
// the whole process table where the kernel has no such files.
func children() []int {
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	if len(tasks) == 0 {
		return childrenByStat(os.Getpid())
	}
	var pids []int
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// childrenByStat finds the processes whose parent is ppid.
func childrenByStat(ppid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command name may hold spaces and parentheses: fields start
		// after the last ')'.
		s := string(data)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			f := strings.Fields(s[i+1:])
			if len(f) > 1 && f[1] == strconv.Itoa(ppid) {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}
