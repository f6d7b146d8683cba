package sandbox

import (
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/creack/pty"
)

// Process is a started command: a foreground call waits for it (Run), a
// background process outlives the call that started it (the bash tool's
// background mode) — confined alike, for its whole life, under the policy
// in force when it started, and ended alike: Kill takes its whole tree.
type Process struct {
	c *ConfinedArgv
	p ExecutionPolicy
	// run is the command's start: l (a cold launch of its own), or a call
	// in a warm sandbox (warm_linux.go).
	run    running
	l      *launch
	tail   *tailWriter
	stdin  io.WriteCloser // its stdin, or the terminal's master
	master *os.File       // the terminal, when spec.TTY
	done   chan struct{}
	res    RunResult
	mu     sync.Mutex
}

// Start starts spec.Argv under p and returns at once. An error means the
// command did not start (see Run).
func (e *Executor) Start(p ExecutionPolicy, spec RunSpec) (*Process, error) {
	return e.start(p, spec, false)
}

// start starts spec.Argv; warm lets a foreground call without a terminal
// run in a warm sandbox (Run's calls: a process session outlives its call
// and takes signals, which only a launch of its own passes on).
func (e *Executor) start(p ExecutionPolicy, spec RunSpec, warm bool) (*Process, error) {
	confined, err := e.prepare(spec.Argv, p, spec.Egress)
	if err != nil {
		return &Process{}, &NeverRanError{Err: err}
	}
	started := false
	defer func() {
		if !started {
			confined.Cleanup()
		}
	}()
	proc := &Process{c: confined, p: p, tail: &tailWriter{max: tailSize}, done: make(chan struct{})}
	proc.res = RunResult{Backend: confined.Backend, Enforcement: confined.Enforcement, Unenforced: confined.Unenforced}
	if warm && !spec.TTY && !spec.Interactive && spec.Started == nil {
		if w, ok := e.startWarm(confined, spec, proc.tail, p.TmpDir); ok {
			proc.run = w
			started = true
			go proc.wait()
			return proc, nil
		}
	}
	l, err := confined.newLaunch()
	if err != nil {
		return proc, err
	}
	proc.l, proc.run = l, l
	cmd := l.Cmd
	cmd.Dir, cmd.Env = spec.Dir, spec.Env
	cmd.WaitDelay = spec.WaitDelay
	l.OwnGroup = spec.OwnGroup
	var childEnd *os.File
	if spec.TTY {
		// A terminal of its own: programs that need one (a REPL, a
		// prompt) get it, and the human's terminal is never theirs.
		master, tty, err := pty.Open()
		if err != nil {
			return proc, fmt.Errorf("opening a terminal: %w", err)
		}
		pty.Setsize(master, &pty.Winsize{Rows: 24, Cols: 120})
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
		proc.master, proc.stdin, childEnd = master, master, tty
		out := teeTo(spec.Stdout, proc.tail)
		go io.Copy(out, master) // ends with EIO once every holder of the tty is gone
	} else {
		if spec.Interactive {
			w, err := cmd.StdinPipe()
			if err != nil {
				return proc, err
			}
			proc.stdin = w
		} else {
			cmd.Stdin = spec.Stdin
		}
		cmd.Stdout, cmd.Stderr = teeTo(spec.Stdout, proc.tail), teeTo(spec.Stderr, proc.tail)
		if spec.Stdout != nil && spec.Stdout == spec.Stderr {
			cmd.Stderr = cmd.Stdout // one writer keeps the order of what both write
		}
	}
	if err := l.Start(); err != nil {
		if childEnd != nil {
			childEnd.Close()
			proc.master.Close()
		}
		return proc, err
	}
	if childEnd != nil {
		childEnd.Close() // the command holds its own
	}
	if spec.Started != nil {
		spec.Started(proc)
	}
	started = true
	go proc.wait()
	return proc, nil
}

// early is the result of a process that never started: the backend, for
// the caller's message.
func (pr *Process) early() RunResult { return pr.res }

// running is a started command, in a launch of its own (launch) or in a
// warm sandbox (warmCall): how it is waited for and killed.
type running interface {
	Wait() (Outcome, error)
	Kill()
}

func (pr *Process) wait() {
	out, waitErr := pr.run.Wait()
	pr.run.Kill() // whatever is left in the group goes with it
	pr.c.Cleanup()
	pr.mu.Lock()
	pr.res.Outcome = out
	pr.res.BlockedHosts = pr.c.BlockedHosts()
	if waitErr != nil {
		pr.res.Ending, pr.res.RunnerFailure = RunnerFailed, fmt.Sprintf("waiting for the command: %v", waitErr)
	} else {
		output := pr.tail.String()
		pr.res.Ending = judge(pr.c, pr.p, &pr.res.Outcome, output)
		pr.res.RefusalSeen = pr.c.Backend != "none" && (looksDenied(pr.c.DenialSignatures, output) || looksDenied([]string{"Device or resource busy"}, output))
	}
	pr.mu.Unlock()
	if pr.master != nil {
		pr.master.Close()
	}
	close(pr.done)
}

// Pid is the runner's process id; 0 in a warm sandbox, whose commands
// run beneath a zygote.
func (pr *Process) Pid() int {
	if pr.l == nil {
		return 0
	}
	return pr.l.Cmd.Process.Pid
}

// Done is closed once the command and everything it started are gone.
func (pr *Process) Done() <-chan struct{} { return pr.done }

// Result is how the command ended; valid once Done is closed.
func (pr *Process) Result() RunResult {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.res
}

// Kill ends the command and every process it started.
func (pr *Process) Kill() { pr.run.Kill() }

// Input writes to the command's stdin or terminal. It fails for a process
// started without one.
func (pr *Process) Input(p []byte) (int, error) {
	if pr.stdin == nil {
		return 0, fmt.Errorf("the process was started without an input")
	}
	return pr.stdin.Write(p)
}

// CloseInput closes the command's stdin (end of input); on a terminal the
// caller writes ^D instead.
func (pr *Process) CloseInput() error {
	if pr.stdin == nil || pr.master != nil {
		return nil
	}
	return pr.stdin.Close()
}

// Signal sends sig to the command: through its reaping helper's control
// pipe under Landlock and for an unconfined command (the reaper passes it
// on, and ignores any signal sent to itself), to every process of the
// sandbox under bwrap (the command runs in a pid namespace beneath bwrap's
// own two processes), to the process group of a command run directly.
func (pr *Process) Signal(sig syscall.Signal) error {
	select {
	case <-pr.done:
		return nil
	default:
	}
	if pr.l == nil {
		return fmt.Errorf("a command in a warm sandbox takes no signals but a kill")
	}
	if pr.c.Backend != "bwrap" && pr.c.reapFD > 0 {
		return pr.l.signalReaper(sig)
	}
	return signalTree(pr.c.Backend, pr.l.Cmd.Process.Pid, pr.l.OwnGroup, sig)
}
