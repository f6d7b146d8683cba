package helper

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Under Landlock there is no pid namespace whose end takes every process
// with it: a command's `setsid -f`, `nohup … &` or double-forked daemon
// would outlive the call, keep the mode it started with after the session
// narrows, and keep the human's terminal. So the helper runs twice: the
// first, the reaper, stays outside the sandbox as the command's parent and
// child subreaper — every orphan of the tree is reparented to it rather
// than to init — and starts itself again as the second, which confines
// itself and execs the command. When the command exits, or cordon closes
// the control pipe (a timeout, a cancellation, cordon itself gone), the
// reaper kills everything left, reaps it, and exits as the command did.
//
// The reaper is outside the command's Landlock domain, so the command can
// neither signal it (ABI 6 signal scoping) nor ptrace it or write its
// memory (Landlock confines ptrace to the domain); it has no capabilities,
// no_new_privs, and is not dumpable.

// The reaper must outlive every signal but SIGKILL: dead, it would leave
// the command's orphans to init (with no warden, before Landlock ABI 6,
// nothing would kill them). Yet the ones that end a Go program are sent
// to it by the terminal (^C, ^\, a hang-up: under `cordon exec` it is in
// the terminal's foreground group) and by whoever signals its process
// group. Cordon itself sends it none: it passes a signal for the command
// over the control pipe (reapLive), which is how one reaches the
// command at all — the reaper passes on nothing it receives.
//
// It ignores them (SIG_IGN) rather than listening through os/signal,
// whose signal-mask thread, template thread and receiving thread cost
// three of the pids a session is allowed. An ignored signal stays ignored
// across fork and exec, so this holds only where the reaper's child sets
// them back before the command runs: the confining helper does
// (resetIgnoredSignals), and so do the helper and the zygote bwrap starts
// in the sandbox; bwrap itself keeps them ignored, which the reaper above
// it does too. An unconfined command is the reaper's own child, which
// would inherit them: that reaper listens instead (surviveSignals).
var endingSignals = []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM}

// surviveSignals makes the reaper outlive endingSignals (see above).
// commandIsChild says that the reaper forks the command itself.
func surviveSignals(commandIsChild bool) {
	if commandIsChild {
		// Go's handler, which a child resets to the default; a channel
		// nobody reads drops every signal.
		signal.Notify(make(chan os.Signal, 1), endingSignals...)
		return
	}
	signal.Ignore(endingSignals...)
}

// reap starts the confining helper and returns the reaper's exit code once
// nothing of the command is left. Where the command was killed by a
// signal, the reaper kills itself with the same one.
func reap(cfg Config, status *os.File) int {
	if cfg.SetGOMAXPROCS {
		if cfg.CommandGOMAXPROCS == "" {
			os.Unsetenv("GOMAXPROCS")
		} else {
			os.Setenv("GOMAXPROCS", cfg.CommandGOMAXPROCS)
		}
	}
	var passed []uintptr
	if cfg.PassFDs {
		// Listed before anything of the reaper's own is opened.
		passed = inheritedFDs(cfg.ReapFD)
	}
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return failStarting(status, fmt.Errorf("marking inherited descriptors close-on-exec: %w", err))
	}
	steps := []struct {
		what string
		do   func() error
	}{
		{"becoming a child subreaper", func() error { return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }},
		{"making the reaper non-dumpable", func() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }},
	}
	if !cfg.Unconfined {
		// An unconfined command keeps every privilege it would have had
		// (sudo, capabilities): the reaper, its parent, gives up none.
		steps = append(steps,
			struct {
				what string
				do   func() error
			}{"setting no_new_privs", func() error { return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }},
			struct {
				what string
				do   func() error
			}{"dropping capabilities", dropCapabilities})
	}
	for _, step := range steps {
		if err := step.do(); err != nil {
			return failStarting(status, fmt.Errorf("%s: %w", step.what, err))
		}
	}
	if cfg.Unconfined {
		// What the confining helper does before its exec, done here: the
		// command is the reaper's own child.
		resetIgnoredSignals()
	}
	surviveSignals(cfg.Unconfined && !cfg.PassFDs)
	child := cfg
	child.ReapFD = 0
	child.SetGOMAXPROCS, child.CommandGOMAXPROCS = false, ""
	files := []uintptr{0, 1, 2}
	if status != nil {
		child.StatusFD = len(files)
		files = append(files, status.Fd())
	}
	// With signal scoping the sandbox carries a warden that kills it whole
	// (warden_linux.go); without, the reaper's own walk is all there is.
	var warden, wardenEnd *os.File
	if cfg.LandlockABI >= 6 {
		var err error
		if wardenEnd, warden, err = os.Pipe(); err != nil {
			return failStarting(status, fmt.Errorf("the warden's pipe: %w", err))
		}
		child.WardenFD = len(files)
		files = append(files, wardenEnd.Fd())
	}
	var closeWarden sync.Once
	killAll := func() {
		if warden == nil {
			killDescendants()
			return
		}
		closeWarden.Do(func() { warden.Close() })
	}
	exe, err := os.Executable()
	if err != nil {
		return failStarting(status, err)
	}
	path, argv := exe, append([]string{exe, Arg}, child.Args()...)
	if cfg.Unconfined {
		// The command itself, started by the reaper: what it reports is
		// the command's, as from a confining helper that execs it.
		files = append(files[:3], passed...)
		if status != nil {
			status.WriteString(StatusStarted)
		}
		argv = cfg.Argv
		if path, err = exec.LookPath(argv[0]); err != nil {
			fmt.Fprintf(os.Stderr, "cordon: %s: command not found\n", argv[0])
			return 127
		}
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: files,
		// Should the thread that forks it end, or the reaper die, so does
		// the command (its descendants are killed by nobody then, which
		// is why cordon never kills the reaper but asks it). The reaper
		// has no locked goroutine, so no thread of it ends but with it.
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil && cfg.Unconfined {
		fmt.Fprintf(os.Stderr, "cordon: %s: %v\n", argv[0], err)
		if errors.Is(err, unix.ENOENT) {
			return 127
		}
		return 126
	}
	if err != nil {
		return failStarting(status, fmt.Errorf("starting the confined helper: %w", err))
	}
	if status != nil {
		status.Close() // the confining helper reports, on its own copy
	}
	if wardenEnd != nil {
		wardenEnd.Close() // the confining helper, then the warden, hold their own
	}
	// One loop reaps every child (the command, and each orphan handed
	// to the helper); once the command has exited, or cordon has closed
	// the control pipe, every reaped process is a cue to kill what is left,
	// since its own children have just become the helper's.
	var ending, asked, leftSome atomic.Bool
	passOn := func(sig syscall.Signal) {
		if !ending.Load() {
			unix.Kill(pid, sig)
		}
	}
	askEnd := func() {
		asked.Store(true)
		ending.Store(true)
		killAll()
	}
	exit, exited, endAsked, live := reapLive(pid, cfg.ReapFD, passOn)
	switch {
	case !live:
		// Non-blocking, so that its reader waits in the runtime's
		// poller rather than in a thread of its own.
		unix.SetNonblock(cfg.ReapFD, true)
		go readControl(os.NewFile(uintptr(cfg.ReapFD), "control"), passOn, askEnd)
	case endAsked:
		askEnd()
	}
	exit = reapTree(pid, exit, exited, &ending, func() {
		if !asked.Load() {
			leftSome.Store(true)
		}
		killAll()
	})
	if cfg.Unconfined && !cfg.PassFDs && leftSome.Load() {
		// Said where the caller reads the command's output: an unconfined
		// command's daemon is ended as a confined one's is, and the model
		// must not believe it still runs.
		fmt.Fprintln(os.Stderr, "cordon: the command exited; the processes it left running were ended with it (every process a call starts ends with the call; use a background process for one that must keep running)")
	}
	if exit.Signaled() {
		// The default disposition, set in the kernel: neither ignored
		// (surviveSignals) nor dropped by Go's handler.
		sig := exit.Signal()
		rtSigaction(int(sig), &kernelSigaction{}, nil)
		unix.Kill(os.Getpid(), sig)
		return 128 + int(sig) // a signal whose default is to be ignored
	}
	return exit.ExitStatus()
}

// The control pipe, which cordon alone holds, carries signals to pass on
// to the command, a byte each (sandbox's Process.Signal); its end — cordon
// closed it, or cordon is gone — asks for everything to be killed.

// reapLive runs the reaper while the command runs: it reaps what exits,
// passes on the signals the control pipe carries, and returns once the
// command's main process has exited (exited, with its status) or the
// pipe's end asks for the end (endAsked). It does all of it in the calling
// goroutine, which waits in poll(2) on the pipe and a pidfd of the main
// process, and no other goroutine runs meanwhile: a goroutine waiting in
// a system call beside another, or beside the runtime's poller, costs a
// thread each (pids per session), and this way the runtime needs no
// thread but the one it hands the scheduler to while this one waits. An
// orphan that exits meanwhile is a zombie until the next wake-up, at most
// orphanReapInterval later. Without live (no pidfd: Linux before 5.3, or
// poll failed) nothing was done that the caller must not do again.
func reapLive(main, control int, passOn func(syscall.Signal)) (exit unix.WaitStatus, exited, endAsked, live bool) {
	pidfd, err := unix.PidfdOpen(main, 0)
	if err != nil {
		return exit, false, false, false
	}
	defer unix.Close(pidfd)
	unix.SetNonblock(control, true)
	fds := []unix.PollFd{{Fd: int32(control), Events: unix.POLLIN}, {Fd: int32(pidfd), Events: unix.POLLIN}}
	var buf [64]byte
	for {
		for {
			var ws unix.WaitStatus
			got, err := unix.Wait4(-1, &ws, unix.WALL|unix.WNOHANG, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil || got == 0 {
				break // nothing more has exited (never ECHILD: main is a child)
			}
			if got == main {
				return ws, true, false, true
			}
		}
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, int(orphanReapInterval/time.Millisecond)); err != nil {
			if err == unix.EINTR {
				continue
			}
			return exit, false, false, false
		}
		if fds[0].Revents == 0 {
			continue // the main process exited, or time to reap orphans
		}
		n, err := unix.Read(control, buf[:])
		passBytes(buf[:max(n, 0)], passOn)
		if n == 0 || err != nil && err != unix.EAGAIN && err != unix.EINTR {
			return exit, false, true, true // the end, or a pipe that fails
		}
	}
}

// orphanReapInterval bounds how long an orphan that exits while the
// command runs stays a zombie, holding its pid.
const orphanReapInterval = time.Second

// readControl reads the control pipe where reapLive cannot: it waits in
// the runtime's poller.
func readControl(control *os.File, passOn func(syscall.Signal), end func()) {
	var buf [64]byte
	for {
		n, err := control.Read(buf[:])
		passBytes(buf[:n], passOn)
		if err != nil {
			end()
			return
		}
	}
}

func passBytes(b []byte, passOn func(syscall.Signal)) {
	for _, sig := range b {
		if sig > 0 && sig < 65 {
			passOn(syscall.Signal(sig))
		}
	}
}

// reapTree reaps every child until none is left (ECHILD) and returns how
// main ended (exit, if it was reaped already: exited). Once main has
// exited (ending is then set), or ending is set by the caller, each reap
// is a cue to kill what is left: the orphans of the one just reaped have
// become the caller's children (it is their subreaper, or their init). It
// looks before it kills: most commands leave nothing, and then the look
// says ECHILD at once.
func reapTree(main int, exit unix.WaitStatus, exited bool, ending *atomic.Bool, kill func()) unix.WaitStatus {
	options := unix.WALL
	if exited {
		ending.Store(true)
	}
	if ending.Load() {
		options = unix.WALL | unix.WNOHANG
	}
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, options, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return exit // ECHILD: nothing of the command is left
		}
		if got == 0 {
			// Children are left, and none has ended (WNOHANG).
			kill()
			options = unix.WALL
			continue
		}
		if got == main {
			exit = ws
			ending.Store(true)
		}
		if ending.Load() {
			options = unix.WALL | unix.WNOHANG
		}
	}
}

func failStarting(status *os.File, err error) int {
	if status != nil {
		fmt.Fprintf(status, "%s%v", StatusError, err)
	}
	fmt.Fprintf(os.Stderr, "cordon: sandbox runner failed: %v\n", err)
	return 125
}

// killDescendants kills every descendant of the helper, where there is no
// warden to do it at once (Landlock before ABI 6). It stops the whole tree
// top-down, then kills it: a stopped process runs nothing, so none lives
// on once its parent is gone. Each process is stopped before its children
// are listed, and one with a signal pending cannot fork, so the listing is
// complete — but for a process of the tree not stopped yet, which may
// resume one that is (SIGCONT) or fork and exit as the walk goes: only the
// warden's kill(-1) is atomic. Every signal goes through a pidfd whose
// process is first checked to be the listed parent's child (or, orphaned,
// the helper's), so that a pid freed and reused meanwhile is never
// signalled.
func killDescendants() {
	self := os.Getpid()
	var tree []int // pidfds
	defer func() {
		for _, fd := range tree {
			unix.Close(fd)
		}
	}()
	seen := map[int]bool{}
	type child struct{ pid, parent int }
	level := []child{}
	for _, pid := range childrenOf(self) {
		level = append(level, child{pid, self})
	}
	for len(level) > 0 {
		var next []child
		for _, c := range level {
			if seen[c.pid] {
				continue
			}
			seen[c.pid] = true
			fd, err := unix.PidfdOpen(c.pid, 0)
			if err != nil {
				continue // gone
			}
			if ppid := parentOf(c.pid); ppid != c.parent && ppid != self {
				unix.Close(fd) // not the process listed
				continue
			}
			unix.PidfdSendSignal(fd, unix.SIGSTOP, nil, 0)
			tree = append(tree, fd)
			for _, grandchild := range childrenOf(c.pid) {
				next = append(next, child{grandchild, c.pid})
			}
		}
		level = next
	}
	for _, fd := range tree {
		unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	}
}

// parentOf reads pid's parent from /proc, or returns 0.
func parentOf(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name may hold spaces and parentheses: fields start
	// after the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// childrenOf lists pid's children: the /proc/PID/task/*/children files
// (every thread's, for a reparented orphan may belong to any), or the
// whole process table where the kernel has no such files.
func childrenOf(pid int) []int {
	if !procListsChildren() {
		return childrenByStat(pid)
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, _ := os.ReadDir(dir) // none: pid is gone
	var pids []int
	for _, t := range tasks {
		data, _ := os.ReadFile(dir + t.Name() + "/children")
		for _, f := range strings.Fields(string(data)) {
			if child, err := strconv.Atoi(f); err == nil {
				pids = append(pids, child)
			}
		}
	}
	return pids
}

// procListsChildren says whether the kernel has /proc/PID/task/TID/children
// (CONFIG_PROC_CHILDREN).
var procListsChildren = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/thread-self/children")
	return err == nil
})

// childrenByStat finds the processes whose parent is ppid.
func childrenByStat(ppid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && parentOf(pid) == ppid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// inheritedFDs lists, for a child that must get them at the same numbers,
// the descriptors from 3 up that this process inherited: each at its own
// index, and -1 (closed in the child) for control and any gap.
func inheritedFDs(control int) []uintptr {
	entries, _ := os.ReadDir("/proc/self/fd")
	top := -1
	open := map[int]bool{}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		// The listing's own descriptor is closed by now.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
			open[fd] = true
			top = max(top, fd)
		}
	}
	var files []uintptr
	for fd := 3; fd <= top; fd++ {
		if open[fd] && fd != control {
			files = append(files, uintptr(fd))
		} else {
			files = append(files, ^uintptr(0))
		}
	}
	return files
}
