package sandbox

import (
	"github.com/cordonhq/cordon/internal/helper"
	"github.com/cordonhq/cordon/internal/procwait"

	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// launch is one start of a ConfinedArgv. The caller configures Cmd
// (stdio, Dir, Env, SysProcAttr) and then calls Start and Wait, which add
// what the backend needs: the helper's status pipe and its extra files.
type launch struct {
	Cmd *exec.Cmd
	// OwnGroup makes the runner lead a process group of its own, so that
	// Kill takes the group (the bash tool; `cordon exec` leaves the
	// command in the terminal's foreground group).
	OwnGroup bool
	c        *ConfinedArgv

	statusR, statusW *os.File
	status           chan string
	// control is cordon's end of a reaping helper's control pipe: closing
	// it makes the helper kill the command's whole tree.
	control *os.File
	exited  chan struct{}
	guarded bool
	// lost is set once the watch saw the host replace a path whose
	// protection the sandbox's mounts kept; stopWatch ends the watch.
	lost      lostProtection
	stopWatch func()
	started   atomic.Bool
	// ownHelpers forgets, for the HTTP peer check, the helpers of this
	// launch it was told of (registerHelpers).
	ownHelpers helperRegistry
}

// Outcome is how a launched command ended.
type Outcome struct {
	ExitCode int
	// Signal is set when the command was killed by a signal.
	Signal syscall.Signal
	// RunnerFailure is set when the sandbox runner failed before the
	// command started: the exit code is then the runner's, not the
	// command's.
	RunnerFailure string
	// Undone lists what the guard and the repository audit undid after
	// the command: writes to protected paths that no OS mechanism could
	// refuse while it ran. GuardErr says what could not be undone.
	Undone   []Change
	GuardErr error
	// LostProtection is set when the sandbox was killed because the host
	// replaced a path whose protection its mounts kept (LostPath, "" when
	// the watch could not tell which).
	LostProtection bool
	LostPath       string
}

// NewLaunch prepares a launch. The command runs in the caller's cwd unless
// Cmd.Dir is set.
func (c *ConfinedArgv) newLaunch() (*launch, error) {
	if len(c.Argv) == 0 {
		return nil, errors.New("empty command")
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Args = c.Argv
	return &launch{Cmd: cmd, c: c}, nil
}

// Start starts the command.
func (l *launch) Start() error {
	l.Cmd.ExtraFiles = append(l.Cmd.ExtraFiles, l.c.ExtraFiles...)
	var childEnds []*os.File
	pipeAt := func(fd int, what string) (r, w *os.File, err error) {
		if got := 3 + len(l.Cmd.ExtraFiles); got != fd {
			return nil, nil, invariant("%s fd is %d in the argv but would be %d", what, fd, got)
		}
		if r, w, err = os.Pipe(); err != nil {
			return nil, nil, fmt.Errorf("%s pipe: %w", what, err)
		}
		return r, w, nil
	}
	if l.c.statusFD > 0 {
		r, w, err := pipeAt(l.c.statusFD, "status")
		if err != nil {
			return err
		}
		l.statusR, l.statusW = r, w
		l.Cmd.ExtraFiles = append(l.Cmd.ExtraFiles, w)
		childEnds = append(childEnds, w)
	}
	if l.c.reapFD > 0 {
		r, w, err := pipeAt(l.c.reapFD, "control")
		if err != nil {
			l.closeAll(childEnds...)
			return err
		}
		l.control = w // close-on-exec: no other child holds it open
		l.Cmd.ExtraFiles = append(l.Cmd.ExtraFiles, r)
		childEnds = append(childEnds, r)
	}
	if len(l.c.Env) > 0 {
		l.Cmd.Env = l.c.egress.scrubEnv(runnerEnv(l.Cmd.Env, l.c.Env))
	}
	if l.c.reapFD > 0 {
		leanReaper(l.Cmd)
	}
	if l.Cmd.SysProcAttr == nil {
		l.Cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	setDeathSignal(l.Cmd.SysProcAttr, l.c.reapFD > 0)
	if l.OwnGroup {
		leadGroup(l.Cmd.SysProcAttr)
	}
	if l.c.guard != nil {
		if err := l.c.guard.begin(); err != nil {
			l.closeAll(childEnds...)
			return err
		}
		l.guarded = true
	}
	// Watched from before the mounts are made, so that no replacement
	// between them and the watch goes unseen.
	stop, err := watchLasting(l.c.lasting, func(path string) {
		l.lost.set(path)
		if l.started.Load() {
			l.Kill()
		}
	})
	if err != nil {
		l.closeAll(childEnds...)
		l.finish()
		return err
	}
	l.stopWatch = stop
	err = l.Cmd.Start()
	for _, f := range childEnds {
		f.Close() // the child holds its own copies
	}
	if err != nil {
		l.finish()
		return err
	}
	l.exited = make(chan struct{})
	l.started.Store(true)
	l.c.egress.serveTree(l.Cmd.Process.Pid)
	l.ownHelpers.reaper(l.c, l.Cmd.Process.Pid)
	if _, lost := l.lost.get(); lost {
		l.Kill() // replaced before the command could be killed
	}
	if l.statusR != nil {
		l.status = make(chan string, 1)
		go func(r *os.File) {
			// Bounded: the helper writes a few short messages.
			b := l.ownHelpers.readStatus(l.c, io.LimitReader(r, 64<<10))
			r.Close()
			l.status <- b
		}(l.statusR)
	}
	return nil
}

func (l *launch) closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
	for _, f := range []*os.File{l.statusR, l.control} {
		if f != nil {
			f.Close()
		}
	}
}

// Kill ends the command and everything it started: a reaping helper is
// asked to (it kills the tree and exits; it is killed itself only if it
// has not after a grace period), anything else is killed with its process
// group. Safe to call at any time, and more than once.
func (l *launch) Kill() {
	p := l.Cmd.Process
	if p == nil {
		return
	}
	if l.control != nil {
		l.control.Close()
		select {
		case <-l.exited:
			return
		default:
		}
		if procwait.Exit(p, killGrace) {
			return
		}
	}
	killRunner(p, l.OwnGroup)
}

// leanReaper starts a reaping helper (cmd runs one: exe, helper.Arg, its
// config) with GOMAXPROCS=1, so that its runtime starts no thread for a
// second P (pids per session), and tells it the command's own GOMAXPROCS
// to give back.
func leanReaper(cmd *exec.Cmd) {
	if len(cmd.Args) < 2 || cmd.Args[1] != helper.Arg {
		return
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	own := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOMAXPROCS="); ok {
			own = v
		}
	}
	cmd.Env = mergeEnv(env, []string{"GOMAXPROCS=1"})
	cmd.Args = append(cmd.Args[:2:2], append([]string{helper.CommandGOMAXPROCSArg, own}, cmd.Args[2:]...)...)
}

// signalReaper asks the reaping helper to pass sig on to the command: one
// byte on the control pipe, which only cordon holds. A signal sent to the
// reaper itself is ignored (internal/helper/reaper_linux.go).
func (l *launch) signalReaper(sig syscall.Signal) error {
	if sig <= 0 || sig > 64 {
		return fmt.Errorf("signal %d cannot be passed on", sig)
	}
	_, err := l.control.Write([]byte{byte(sig)})
	return err
}

// killGrace is how long a reaping helper has to kill its tree.
const killGrace = 2 * time.Second

// Wait waits for the command and tells a runner failure from the
// command's own exit.
func (l *launch) Wait() (Outcome, error) {
	procwait.Exit(l.Cmd.Process, 0) // holding no P meanwhile (procwait)
	err := l.Cmd.Wait()
	if l.exited != nil {
		close(l.exited)
	}
	defer l.finish()
	var out Outcome
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		out.ExitCode = exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			out.Signal = ws.Signal()
			out.ExitCode = 128 + int(out.Signal)
		}
	default:
		return out, err
	}
	l.endWatch()
	out.LostPath, out.LostProtection = l.lost.get()
	if l.c.guard != nil {
		l.c.guard.noteHost(l.lost.replaced())
	}
	if l.status != nil {
		out.RunnerFailure = runnerFailure(<-l.status, l.c.Backend, out.ExitCode)
	}
	// Every process of the command is gone now (bwrap's pid namespace
	// ended with it, the reaping helper exits last): what it left in
	// protected paths can be undone without a race.
	out.Undone, out.GuardErr = l.endGuard()
	return out, nil
}

func (l *launch) endGuard() ([]Change, error) {
	if !l.guarded {
		return nil, nil
	}
	l.guarded = false
	return l.c.guard.end()
}

func runnerFailure(status, backend string, exitCode int) string {
	switch {
	case strings.HasPrefix(status, helper.StatusStarted):
		return ""
	case strings.HasPrefix(status, helper.StatusError):
		return strings.TrimSpace(strings.TrimPrefix(status, helper.StatusError))
	}
	return fmt.Sprintf("%s exited %d before the command started", backend, exitCode)
}

// endWatch ends the lasting watch, once the sandbox is gone.
func (l *launch) endWatch() {
	if l.stopWatch != nil {
		l.stopWatch()
		l.stopWatch = nil
	}
}

func (l *launch) finish() {
	l.ownHelpers.release()
	l.endWatch()
	if l.control != nil {
		l.control.Close() // kept, for a late Signal's write to fail rather than race
	}
	l.endGuard()
}

// Cleanup undoes what Prepare set up on the host (the egress proxy of a
// network-restricted call): after the command ended, or for an argv that
// is never launched (e.g. `cordon profile`). Safe to call more than once.
func (c *ConfinedArgv) Cleanup() {
	if c == nil {
		return
	}
	c.egress.close()
}

// BlockedHosts are the hosts the egress proxy refused so far.
func (c *ConfinedArgv) BlockedHosts() []string { return c.egress.blocked() }
