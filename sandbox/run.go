package sandbox

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// Run is one command from policy to outcome, the way both `cordon exec`
// and the bash tool run one: prepare (confined, unconfined or refused),
// start, wait — killing the whole tree when ctx ends — and classify how it
// ended. What the outcome is called for a model or a terminal is the
// caller's business.

// RunSpec is what a caller gives a command besides its policy.
type RunSpec struct {
	Argv           []string
	Dir            string
	Env            []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// OwnGroup makes the runner lead a process group of its own (the bash
	// tool); `cordon exec` leaves it in the terminal's foreground group.
	OwnGroup bool
	// WaitDelay bounds how long a descendant that keeps the output open
	// may hold the call after the command exited.
	WaitDelay time.Duration
	// Started is told the process once it runs (to forward signals to
	// it with Process.Signal).
	Started func(*Process)
	// TTY gives the command a pseudo-terminal of its own for stdin,
	// stdout and stderr (its output goes to Stdout; Process.Input writes
	// to it). Interactive, without a terminal, gives it a stdin pipe that
	// Process.Input writes to.
	TTY, Interactive bool
	// Egress is the caller's side of the egress proxy (network
	// restricted): who is asked about a new host, who logs decisions.
	Egress EgressHooks
	// HandOverAfter, with HandOver, lets a command that runs longer go on
	// without its caller: Run offers the running Process to HandOver, and
	// returns with Ending HandedOver when it takes it (else the command is
	// killed and the run ends TimedOut). A long foreground build thus
	// becomes a background process instead of being lost.
	HandOverAfter time.Duration
	HandOver      func(*Process) bool
}

// Ending is how a run ended.
type Ending int

// The endings, from the most ordinary.
const (
	// Exited: the command ran and exited (any code is a normal outcome).
	Exited Ending = iota
	// Denied: the sandbox refused something the command tried — a denial
	// signature in its output with a failing exit, or writes to protected
	// paths that the guard undid.
	Denied
	// RunnerFailed: the runner failed before the command started.
	RunnerFailed
	// TimedOut and Cancelled: ctx ended (its deadline, or the caller), and
	// the command and every process it started were killed.
	TimedOut
	Cancelled
	// HandedOver: the command was still running at RunSpec.HandOverAfter
	// and the caller took it over (RunResult.Process); it runs on.
	HandedOver
	// ProtectionLost: the host replaced a path whose protection the
	// sandbox's mounts kept, and the sandbox was killed at once with
	// everything in it (lasting_linux.go).
	ProtectionLost
)

// RunResult is what happened.
type RunResult struct {
	Outcome
	Ending      Ending
	Backend     string
	Enforcement Enforcement
	// Unenforced names what the backend leaves to others (partial).
	Unenforced []string
	// RefusalSeen says the output carries a refusal of the sandbox (a
	// denial signature, or EBUSY from a protected mount point), whatever
	// the exit: a command may get over one and still succeed.
	RefusalSeen bool
	// BlockedHosts are the hosts the egress proxy refused (network
	// restricted), for the model to tell the human.
	BlockedHosts []string
	// Process is the command that runs on, when Ending is HandedOver.
	Process *Process
}

// tailSize is how much of a command's output is kept for judging it: the
// signatures of a denial or a runner failure sit at the end.
const tailSize = 64 << 10

// Run runs spec.Argv under p to its end. An error means the command did
// not run: a *NeverRanError when the sandbox refused it before any process
// started (with an *UnavailableError among its causes where no backend
// could confine it: fail closed), otherwise the runner could not be
// started.
func (e *Executor) Run(ctx context.Context, p ExecutionPolicy, spec RunSpec) (RunResult, error) {
	proc, err := e.start(p, spec, e.Warm)
	if err != nil {
		return proc.early(), err
	}
	var handOver <-chan time.Time
	if spec.HandOver != nil && spec.HandOverAfter > 0 {
		t := time.NewTimer(spec.HandOverAfter)
		defer t.Stop()
		handOver = t.C
	}
	for waiting := true; waiting; {
		select {
		case <-ctx.Done():
			proc.Kill()
			<-proc.Done()
			waiting = false
		case <-proc.Done():
			waiting = false
		case <-handOver:
			if spec.HandOver(proc) {
				res := proc.early()
				res.Ending, res.Process = HandedOver, proc
				return res, nil
			}
			proc.Kill()
			<-proc.Done()
			res := proc.Result()
			res.Ending = TimedOut
			return res, nil
		}
	}
	res := proc.Result()
	// A context that ended while the command ran decides the ending, even
	// if the command's last moments raced with it.
	switch ctxErr := ctx.Err(); {
	case errors.Is(ctxErr, context.DeadlineExceeded):
		res.Ending = TimedOut
	case ctxErr != nil:
		res.Ending = Cancelled
	}
	return res, nil
}

// judge tells the endings of a command that ran to its end apart.
func judge(c *ConfinedArgv, p ExecutionPolicy, o *Outcome, output string) Ending {
	if o.RunnerFailure == "" && c.Backend != "none" && !c.ReportsRunnerStatus() {
		// A backend without cordon's helper (Seatbelt) is judged by its
		// runner-failure rules, before any denial signature.
		if sig, ok := matchAny(c.RunnerFailureRules, o.ExitCode, output); ok {
			o.RunnerFailure = "the runner reported: " + sig
		}
	}
	switch {
	case o.LostProtection:
		return ProtectionLost
	case o.RunnerFailure != "":
		return RunnerFailed
	case len(o.Undone) > 0 || o.GuardErr != nil:
		return Denied
	case o.ExitCode != 0 && p.Mode.Confined() && c.Backend != "none" && looksDenied(c.DenialSignatures, output):
		return Denied
	}
	return Exited
}

// teeTo writes to w (when set) and to the tail.
func teeTo(w io.Writer, tail *tailWriter) io.Writer {
	if w == nil {
		return tail
	}
	return io.MultiWriter(w, tail)
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
