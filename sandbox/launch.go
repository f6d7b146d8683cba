package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// Launch is one start of a ConfinedArgv. The caller configures Cmd
// (stdio, Dir, Env, SysProcAttr) and then calls Start and Wait, which add
// what the backend needs: the helper's status pipe and its extra files.
type Launch struct {
	Cmd *exec.Cmd
	c   *ConfinedArgv

	statusR, statusW *os.File
	status           chan string
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
}

// Helper status protocol: the helper writes statusStarted just before it
// execs the command, or statusError followed by a message when setting up
// the sandbox failed. Nothing at all means the runner never reached it.
const (
	statusStarted = "R"
	statusError   = "E"
)

// NewLaunch prepares a launch. The command runs in the caller's cwd unless
// Cmd.Dir is set.
func (c *ConfinedArgv) NewLaunch() (*Launch, error) {
	if len(c.Argv) == 0 {
		return nil, errors.New("empty command")
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Args = c.Argv
	return &Launch{Cmd: cmd, c: c}, nil
}

// Start starts the command.
func (l *Launch) Start() error {
	l.Cmd.ExtraFiles = append(l.Cmd.ExtraFiles, l.c.ExtraFiles...)
	if l.c.statusFD > 0 {
		if got := 3 + len(l.Cmd.ExtraFiles); got != l.c.statusFD {
			return invariant("status fd is %d in the argv but would be %d", l.c.statusFD, got)
		}
		r, w, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("status pipe: %w", err)
		}
		l.statusR, l.statusW = r, w
		l.Cmd.ExtraFiles = append(l.Cmd.ExtraFiles, w)
	}
	if len(l.c.Env) > 0 {
		base := l.Cmd.Env
		if base == nil {
			base = os.Environ()
		}
		l.Cmd.Env = MergeEnv(base, l.c.Env)
	}
	if l.Cmd.SysProcAttr == nil {
		l.Cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	setDeathSignal(l.Cmd.SysProcAttr)
	err := l.Cmd.Start()
	if l.statusW != nil {
		l.statusW.Close() // the child holds its own copy
	}
	if err != nil {
		l.finish()
		return err
	}
	if l.statusR != nil {
		l.status = make(chan string, 1)
		go func(r *os.File) {
			// Bounded: the helper writes one short message.
			b, _ := io.ReadAll(io.LimitReader(r, 64<<10))
			r.Close()
			l.status <- string(b)
		}(l.statusR)
	}
	return nil
}

// Wait waits for the command and tells a runner failure from the
// command's own exit.
func (l *Launch) Wait() (Outcome, error) {
	err := l.Cmd.Wait()
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
	if l.status != nil {
		out.RunnerFailure = runnerFailure(<-l.status, l.c.Backend, out.ExitCode)
	}
	return out, nil
}

func runnerFailure(status, backend string, exitCode int) string {
	switch {
	case strings.HasPrefix(status, statusStarted):
		return ""
	case strings.HasPrefix(status, statusError):
		return strings.TrimSpace(strings.TrimPrefix(status, statusError))
	}
	return fmt.Sprintf("%s exited %d before the command started", backend, exitCode)
}

func (l *Launch) finish() {
	if l.c.cleanup != nil {
		l.c.cleanup()
		l.c.cleanup = nil
	}
}

// Cleanup undoes host-side effects of Confine for an argv that is never
// launched (e.g. `cordon profile`).
func (c *ConfinedArgv) Cleanup() {
	if c.cleanup != nil {
		c.cleanup()
		c.cleanup = nil
	}
}
