package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cordonhq/cordon/internal/defaults"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
)

// Process sessions (SPEC §5): a bash command started with background runs
// on after the call, confined exactly as a foreground one under the policy
// in force when it started, until it exits, is killed, or its session ends
// — then its whole tree goes. process_output waits for what it writes,
// process_input writes to it, process_kill ends it, process_list shows
// them. Process ids belong to their session.

// Defaults of process sessions (SPEC §5, §8 [processes]).
const (
	DefaultProcessesMax       = defaults.ProcessesMax
	DefaultProcessBufferChars = defaults.ProcessBufferChars
	DefaultYield              = time.Second
	MaxYield                  = 30 * time.Second
	MaxProcessWait            = 60 * time.Second
	DefaultInputWait          = 500 * time.Millisecond
	// MaxProcessInput bounds one process_input: a paste, not a file (a
	// 30 MB one took the server to 330 MB).
	MaxProcessInput = 1 << 20
	// killEscalation is how long a TERM or INT has before KILL follows.
	killEscalation = 2 * time.Second
)

// The signals process_kill sends, the input schema's enum.
const (
	signalTERM = "TERM"
	signalINT  = "INT"
	signalKILL = "KILL"
)

// Reasons a background process ended, as the session log records them.
const (
	reasonExited       = "exited"
	reasonKilled       = "killed"
	reasonSessionEnded = "session-ended"
	reasonModeNarrowed = "mode-narrowed"
	// reasonProtectionLost: the host replaced a path the sandbox kept
	// protected, and the sandbox ended with everything in it.
	reasonProtectionLost = "protection-lost"
)

// bgProcess is one background process of a session.
type bgProcess struct {
	id, command, cwd string
	mode             sandbox.Mode
	// sessionMode is the session's own mode when it started: a later
	// narrowing of the session below the process's mode ends it.
	sessionMode sandbox.Mode
	started     time.Time
	tty         bool
	proc        *sandbox.Process
	out         *OutputBuffer

	mu     sync.Mutex
	reason string // why it was ended, once cordon ended it
}

// processes is a session's table of background processes.
type processes struct {
	mu    sync.Mutex
	next  int
	byID  map[string]*bgProcess
	ended bool // the session is over: nothing may start any more
	// watchers are the goroutines logging processes' ends: a session's end
	// waits for them, so that every process/exit is in its log before
	// the log closes.
	watchers sync.WaitGroup
}

func (ps *processes) get(id string) (*bgProcess, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p, ok := ps.byID[id]
	return p, ok
}

func (ps *processes) all() []*bgProcess {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	out := make([]*bgProcess, 0, len(ps.byID))
	for _, p := range ps.byID {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].started.Before(out[j].started) })
	return out
}

// reserve takes the id of a process about to start, or says why none may.
func (ps *processes) reserve(most int) (string, *ToolError) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	switch live := len(ps.runningLocked()); {
	case ps.ended:
		return "", errorf(CodeUnavailable, "the session is ending: no process may start")
	case live >= most:
		return "", invalid("this session already runs %d background processes, the most it may (processes.max): end one with process_kill first:\n%s", live, ps.describeLocked())
	}
	ps.next++
	return "p" + strconv.Itoa(ps.next), nil
}

// running is the processes still alive.
func (ps *processes) running() []*bgProcess {
	var live []*bgProcess
	for _, p := range ps.all() {
		if p.alive() {
			live = append(live, p)
		}
	}
	return live
}

func (p *bgProcess) alive() bool {
	select {
	case <-p.proc.Done():
		return false
	default:
		return true
	}
}

// end kills the process's tree for reason, and waits until it is gone.
func (p *bgProcess) end(reason string) {
	p.mu.Lock()
	if p.reason == "" && p.alive() {
		p.reason = reason
	}
	p.mu.Unlock()
	p.proc.Kill()
	<-p.proc.Done()
}

func (p *bgProcess) endReason() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reason != "" {
		return p.reason
	}
	if !p.alive() && p.proc.Result().Ending == sandbox.ProtectionLost {
		return reasonProtectionLost
	}
	return reasonExited
}

// EndProcesses kills every background process of the session (it ended:
// stdio EOF, HTTP session gone, cordon stopping) and refuses new ones.
func (s *Session) EndProcesses() {
	ps := s.procs()
	ps.mu.Lock()
	ps.ended = true
	ps.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range ps.running() {
		wg.Add(1)
		go func() { defer wg.Done(); p.end(reasonSessionEnded) }()
	}
	wg.Wait()
	ps.watchers.Wait()
}

// endNarrowed kills, before a call runs, every process started under a
// mode wider than the one the session (or its parent) has narrowed to
// since.
func (s *Session) endNarrowed(now modeNow) {
	s.foreground.endNarrowed(now)
	for _, p := range s.procs().running() {
		if now.ends(p.mode, p.sessionMode) {
			p.end(reasonModeNarrowed)
		}
	}
}

func (s *Session) procs() *processes {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.processes == nil {
		s.processes = &processes{byID: map[string]*bgProcess{}}
	}
	return s.processes
}

// ProcessOutput is the structuredContent of process_output and
// process_input, and of a bash call started in the background.
type ProcessOutput struct {
	ProcessID    string `json:"process_id"`
	Running      bool   `json:"running"`
	ExitCode     *int   `json:"exit_code,omitempty" jsonschema:"once it has exited"`
	Output       string `json:"output" jsonschema:"what it wrote since the last read"`
	DroppedChars int64  `json:"dropped_chars" jsonschema:"characters it wrote that were dropped unread (the buffer keeps the newest)"`
	Ended        string `json:"ended,omitempty" jsonschema:"why cordon ended it, as in the text: killed, session-ended or mode-narrowed (the session's mode narrowed below the one it started under)"`
}

// startBackground runs the bash command in the background and answers with
// what it wrote within yield, or its exit if it was that quick.
func (tb *Toolbox) startBackground(ctx context.Context, call Call, pol sandbox.ExecutionPolicy, in BashInput, cwd string) (*Result, *ToolError) {
	yield := DefaultYield
	if in.YieldMs > 0 {
		yield = time.Duration(in.YieldMs) * time.Millisecond
	}
	conf := call.conf()
	ps := call.Session.procs()
	id, terr := ps.reserve(conf.ProcessesMax)
	if terr != nil {
		return nil, terr
	}

	if endedByNarrowing(call, pol.Mode) {
		// Narrowed since the call read the mode (while a question was
		// open): it never starts.
		now := sessionMode(call)
		return nil, denial(NameBash, now, fmt.Sprintf(
			"the session's mode was narrowed to %s after this call began under %s: the background command did not start", now, pol.Mode))
	}
	out := NewStreamBuffer(conf.ProcessBufferChars)
	proc, err := conf.Executor.Start(pol, sandbox.RunSpec{
		Argv: []string{"bash", "-c", in.Command}, Dir: cwd,
		Env:    commandEnv(conf, in.TTY),
		Stdout: out, Stderr: out, OwnGroup: true, TTY: in.TTY, Interactive: !in.TTY,
		// It outlives this call, so nobody can be asked about a new host
		// for it: the lists decide alone.
		Egress: tb.egressHooks(ctx, Call{Session: call.Session, st: call.st}, pol, in.Command),
	})
	if err != nil {
		var never *sandbox.NeverRanError
		if errors.As(err, &never) {
			return nil, unavailable(pol.Mode, err)
		}
		return nil, errorf(CodeRunnerFailed, "starting the command: %v", err)
	}
	// Recorded with the call's one reading: the narrowing check compares
	// the session's mode with what the process runs under.
	bp := &bgProcess{id: id, command: in.Command, cwd: cwd, mode: pol.Mode, sessionMode: call.sessionMode(),
		started: time.Now(), tty: in.TTY, proc: proc, out: out}
	ps.mu.Lock()
	ps.byID[id] = bp
	ps.mu.Unlock()
	call.Session.record(conf.Logger, sessionlog.EventProcessStart, map[string]any{"process_id": id, "command": in.Command, "mode": pol.Mode, "cwd": cwd})
	tb.watch(call, bp)
	// Registered first, then checked: a narrowing that landed while it
	// started ends it here, and one after this check finds it registered
	// (the next call, or the watch below).
	if endedByNarrowing(call, bp.mode) {
		bp.end(reasonModeNarrowed)
	} else {
		go watchNarrowing(call, bp.mode, bp.sessionMode, bp.proc.Done(), func() { bp.end(reasonModeNarrowed) })
	}

	select {
	case <-proc.Done():
	case <-time.After(yield):
	case <-ctx.Done():
	}
	return tb.processResult(bp)
}

// watch logs the process's end, with the reason cordon ended it for.
func (tb *Toolbox) watch(call Call, p *bgProcess) {
	ps := call.Session.procs()
	ps.watchers.Add(1)
	go func() {
		defer ps.watchers.Done()
		<-p.proc.Done()
		p.out.Close()
		res := p.proc.Result()
		data := map[string]any{"process_id": p.id, "exit_code": res.ExitCode, "reason": p.endReason()}
		if res.Signal != 0 {
			data["signal"] = res.Signal.String()
		}
		if kept := hostKept(res.Undone); len(kept) > 0 {
			data["host_kept"] = kept
		}
		call.Session.record(call.conf().Logger, sessionlog.EventProcessExit, data)
	}()
}

// processResult is what a call tells the model about a process now.
func (tb *Toolbox) processResult(p *bgProcess) (*Result, *ToolError) {
	running := p.alive()
	text, dropped := p.out.Take()
	o := ProcessOutput{ProcessID: p.id, Running: running, Output: text, DroppedChars: dropped}
	var b strings.Builder
	if dropped > 0 {
		fmt.Fprintf(&b, "[%d characters of output were dropped unread: the buffer keeps the newest]\n", dropped)
	}
	b.WriteString(text)
	if text != "" && !strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	if running {
		fmt.Fprintf(&b, "[process %s is running: process_output waits for more, process_input writes to it, process_kill ends it]", p.id)
	} else {
		res := p.proc.Result()
		code := res.ExitCode
		o.ExitCode = &code
		switch r := p.endReason(); {
		case r != reasonExited:
			o.Ended = r
			fmt.Fprintf(&b, "[process %s was killed (%s): it and every process it started are gone]", p.id, r)
			if r == reasonProtectionLost {
				fmt.Fprintf(&b, "\n[%s, which the sandbox kept protected, was replaced, removed or moved on the host (the human's tools rewrite files so): a sandbox cannot keep a replaced file protected, so it ended; start the process again]", lostWhat(res.LostPath))
			}
		default:
			fmt.Fprintf(&b, "[process %s exited %d]", p.id, code)
		}
		if (res.Ending == sandbox.Denied || res.Ending == sandbox.ProtectionLost) && len(res.Undone) > 0 {
			b.WriteString("\n" + DenialMarker(p.mode) + "\n" + undoneMessage(res.Outcome, ""))
		}
	}
	return &Result{Text: b.String(), Structured: structured(o)}, nil
}

// ProcessOutputInput are process_output's arguments.
type ProcessOutputInput struct {
	ProcessID string `json:"process_id" jsonschema:"The id bash gave the background process."`
	WaitMs    int    `json:"wait_ms,omitempty" jsonschema:"Wait up to this many milliseconds for new output or the exit, returning as soon as either comes. Default 0: return at once." schema:"minimum=0,maximum=MaxProcessWait"`
}

// ProcessOutputTool returns what a background process wrote since the
// last read, waiting for it when asked.
func (tb *Toolbox) ProcessOutputTool(ctx context.Context, call Call, in ProcessOutputInput) (*Result, *ToolError) {
	call = tb.pin(call)
	if in.WaitMs < 0 || time.Duration(in.WaitMs)*time.Millisecond > MaxProcessWait {
		return nil, invalid("wait_ms must be between 0 and %d", MaxProcessWait.Milliseconds())
	}
	p, terr := tb.process(call, in.ProcessID)
	if terr != nil {
		return nil, terr
	}
	waitForOutput(ctx, p, time.Duration(in.WaitMs)*time.Millisecond)
	return tb.processResult(p)
}

// waitForOutput returns when p has unread output or has exited, or after
// d: an event, never a poll.
func waitForOutput(ctx context.Context, p *bgProcess, d time.Duration) {
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		written := p.out.Written()
		if p.out.Pending() {
			return
		}
		select {
		case <-written:
			return
		case <-p.proc.Done():
			return
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// ProcessInputInput are process_input's arguments.
type ProcessInputInput struct {
	ProcessID string `json:"process_id" jsonschema:"The id bash gave the background process."`
	Input     string `json:"input" jsonschema:"Text written to its stdin or terminal; include \\n to end a line. \\u0003 is Ctrl-C (an interrupt), \\u0004 Ctrl-D (end of input)."`
	WaitMs    *int   `json:"wait_ms,omitempty" jsonschema:"Then wait up to this many milliseconds for its answer. Default 500." schema:"minimum=0,maximum=MaxProcessWait"`
}

// ProcessInputTool writes to a background process and returns what it
// answered. The input passes the approval gate like a bash command.
func (tb *Toolbox) ProcessInputTool(ctx context.Context, call Call, in ProcessInputInput) (*Result, *ToolError) {
	call = tb.pin(call)
	if len(in.Input) > MaxProcessInput {
		return nil, invalid("input is %d bytes; at most %d go to a process in one call (the session log keeps each): send it in pieces, or write it to a file in the workspace and have the process read that",
			len(in.Input), MaxProcessInput)
	}
	wait := DefaultInputWait
	if in.WaitMs != nil {
		if *in.WaitMs < 0 || time.Duration(*in.WaitMs)*time.Millisecond > MaxProcessWait {
			return nil, invalid("wait_ms must be between 0 and %d", MaxProcessWait.Milliseconds())
		}
		wait = time.Duration(*in.WaitMs) * time.Millisecond
	}
	p, terr := tb.process(call, in.ProcessID)
	if terr != nil {
		return nil, terr
	}
	if !p.alive() {
		return nil, invalid("process %s has exited: nothing reads its input any more", p.id)
	}
	if _, terr := tb.authorize(ctx, call, authRequest{tool: NameProcessInput, subject: in.Input, command: in.Input}); terr != nil {
		return nil, terr
	}
	call.Session.record(call.conf().Logger, sessionlog.EventToolCall, map[string]any{"tool": NameProcessInput, "process_id": p.id, "input": in.Input})
	if err := sendInput(p, in.Input); err != nil {
		return nil, errorf(CodeRunnerFailed, "writing to process %s: %v", p.id, err)
	}
	waitForOutput(ctx, p, wait)
	return tb.processResult(p)
}

// sendInput writes input, turning Ctrl-C into the interrupt it means: the
// command's terminal is not its controlling terminal (bwrap's new session
// keeps TIOCSTI out), so the byte alone would reach it as a character.
func sendInput(p *bgProcess, input string) error {
	for {
		i := strings.IndexByte(input, 0x03)
		part := input
		if i >= 0 {
			part = input[:i]
		}
		if part != "" {
			if _, err := p.proc.Input([]byte(part)); err != nil {
				return err
			}
		}
		if i < 0 {
			return nil
		}
		if err := p.proc.Signal(syscall.SIGINT); err != nil {
			return err
		}
		input = input[i+1:]
	}
}

// ProcessKillInput are process_kill's arguments.
type ProcessKillInput struct {
	ProcessID string `json:"process_id" jsonschema:"The id bash gave the background process."`
	Signal    string `json:"signal,omitempty" jsonschema:"TERM (default: KILL follows 2 seconds later), INT, or KILL." schema:"enum=KillSignals"`
}

// ProcessKillOutput is process_kill's structuredContent.
type ProcessKillOutput struct {
	ProcessID string `json:"process_id"`
	ExitCode  *int   `json:"exit_code,omitempty" jsonschema:"once it has exited"`
	Signal    string `json:"signal"`
}

// ProcessKillTool ends a background process and its whole tree.
func (tb *Toolbox) ProcessKillTool(ctx context.Context, call Call, in ProcessKillInput) (*Result, *ToolError) {
	call = tb.pin(call)
	sig := in.Signal
	if sig == "" {
		sig = signalTERM
	}
	p, terr := tb.process(call, in.ProcessID)
	if terr != nil {
		return nil, terr
	}
	p.mu.Lock()
	if p.reason == "" && p.alive() {
		p.reason = reasonKilled
	}
	p.mu.Unlock()
	switch sig {
	case signalKILL:
		p.proc.Kill()
		<-p.proc.Done()
	case signalTERM, signalINT:
		s := syscall.SIGTERM
		if sig == signalINT {
			s = syscall.SIGINT
		}
		p.proc.Signal(s)
		select {
		case <-p.proc.Done():
		case <-time.After(killEscalation):
			p.proc.Kill()
			<-p.proc.Done()
		case <-ctx.Done():
		}
	default:
		return nil, invalid("signal must be TERM, INT or KILL, not %q", in.Signal)
	}
	o := ProcessKillOutput{ProcessID: p.id, Signal: sig}
	text := fmt.Sprintf("process %s: sent %s", p.id, sig)
	if !p.alive() {
		code := p.proc.Result().ExitCode
		o.ExitCode = &code
		text += fmt.Sprintf("; it exited %d, and every process it started is gone", code)
	}
	return &Result{Text: text, Structured: structured(o)}, nil
}

// ProcessListInput are process_list's arguments: none.
type ProcessListInput struct{}

// ProcessInfo is one process in process_list.
type ProcessInfo struct {
	ProcessID string       `json:"process_id"`
	Command   string       `json:"command"`
	Cwd       string       `json:"cwd"`
	Mode      sandbox.Mode `json:"mode"`
	Started   string       `json:"started" jsonschema:"RFC 3339"`
	Running   bool         `json:"running"`
	ExitCode  *int         `json:"exit_code,omitempty"`
	Ended     string       `json:"ended,omitempty" jsonschema:"why cordon ended it, as in the text: killed, session-ended or mode-narrowed"`
}

// ProcessListOutput is process_list's structuredContent.
type ProcessListOutput struct {
	Processes []ProcessInfo `json:"processes"`
}

// ProcessListTool lists the session's background processes.
func (tb *Toolbox) ProcessListTool(ctx context.Context, call Call, _ ProcessListInput) (*Result, *ToolError) {
	call = tb.pin(call)
	tb.narrow(call)
	o := ProcessListOutput{Processes: []ProcessInfo{}}
	var b strings.Builder
	for _, p := range call.Session.procs().all() {
		info := ProcessInfo{ProcessID: p.id, Command: p.command, Cwd: p.cwd, Mode: p.mode,
			Started: p.started.UTC().Format(time.RFC3339), Running: p.alive()}
		state := "running"
		if !info.Running {
			code := p.proc.Result().ExitCode
			info.ExitCode = &code
			state = fmt.Sprintf("exited %d", code)
			if r := p.endReason(); r != reasonExited {
				info.Ended = r
				state += " (" + r + ")"
			}
		}
		o.Processes = append(o.Processes, info)
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\n", p.id, state, p.mode, info.Started, oneLine(p.command))
	}
	if len(o.Processes) == 0 {
		b.WriteString("no background processes in this session\n")
	}
	return &Result{Text: b.String(), Structured: structured(o)}, nil
}

// process finds a process of the call's session: another session's id is
// NOT_FOUND, as is one that never was.
func (tb *Toolbox) process(call Call, id string) (*bgProcess, *ToolError) {
	tb.narrow(call)
	p, ok := call.Session.procs().get(id)
	if !ok {
		return nil, errorf(CodeNotFound, "no process %q in this session: process_list shows the session's processes", id)
	}
	return p, nil
}

// narrow applies a narrowing of the session's mode to its processes
// before the call goes on.
func (tb *Toolbox) narrow(call Call) {
	call.Session.endNarrowed(readMode(call))
}

// sessionMode is the session's mode now: its last sandbox/mode event,
// else the deployment's, never wider than a delegated session's parent's.
// It is for what the model is told; what a call runs under is
// call.sessionMode(), read once.
func sessionMode(call Call) sandbox.Mode {
	return readMode(call).session
}

func (ps *processes) runningLocked() []*bgProcess {
	var live []*bgProcess
	for _, p := range ps.byID {
		if p.alive() {
			live = append(live, p)
		}
	}
	return live
}

func (ps *processes) describeLocked() string {
	live := ps.runningLocked()
	slices.SortFunc(live, func(a, b *bgProcess) int { return a.started.Compare(b.started) })
	var b strings.Builder
	for _, p := range live {
		fmt.Fprintf(&b, "  %s: %s\n", p.id, oneLine(p.command))
	}
	return b.String()
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if len(s) > 120 {
		s = s[:117] + "…"
	}
	return s
}

// lostWhat names the path whose protection a sandbox lost.
func lostWhat(path string) string {
	if path == "" {
		return "a protected path"
	}
	return path
}

// LiveProcesses is how many background processes of the session run.
func (s *Session) LiveProcesses() int { return len(s.procs().running()) }
