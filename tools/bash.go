package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cordonhq/cordon/internal/egress"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
)

// BashInput are the bash tool's arguments.
type BashInput struct {
	Command   string `json:"command" jsonschema:"The shell command, run with bash -c."`
	Cwd       string `json:"cwd,omitempty" jsonschema:"Working directory (absolute, or relative to the workspace). Must exist. Default: the workspace."`
	TimeoutMs int    `json:"timeout_ms,omitempty" jsonschema:"Kill the command (and everything it started) after this many milliseconds. Without it, a command still running after the session's limit (default 120000) is not killed: the call returns its output so far and a process_id, and it goes on in the background. Not for background commands." schema:"minimum=1,maximum=MaxBashTimeout"`
	// Background commands run on after the call (process.go).
	Background bool `json:"background,omitempty" jsonschema:"Run it in the background: a dev server, a watcher, a long test run, a REPL. The call returns after yield_ms with its output so far and a process_id for process_output, process_input and process_kill. Default false."`
	TTY        bool `json:"tty,omitempty" jsonschema:"Give a background command a terminal of its own (a REPL, a program that prompts). Default false."`
	YieldMs    int  `json:"yield_ms,omitempty" jsonschema:"Background only: wait up to this many milliseconds for it to finish before returning. Default 1000." schema:"minimum=1,maximum=MaxYield"`
	Escalation
}

// BashOutput is the bash tool's structuredContent, also beside the error
// of a command that ran (denied, timed out, its runner failed).
type BashOutput struct {
	ExitCode    int                 `json:"exit_code"`
	Output      string              `json:"output"`
	TimedOut    bool                `json:"timed_out"`
	Truncated   bool                `json:"truncated"`
	Mode        sandbox.Mode        `json:"mode"`
	Backend     string              `json:"backend"`
	Enforcement sandbox.Enforcement `json:"enforcement"`
	Denied      bool                `json:"denied"`
	Notes       []string            `json:"notes,omitempty" jsonschema:"why a refusal that the command got over was a protected path, as in the text"`
	// BlockedHosts are the hosts the egress proxy refused (network
	// restricted): the model tells the human, who may allow them.
	BlockedHosts []string `json:"blocked_hosts,omitempty" jsonschema:"network restricted: the host:port the egress proxy refused, which the human may add to allowed_domains"`
	// A background command answers as process_output does.
	ProcessID    string `json:"process_id,omitempty" jsonschema:"background only: the id for process_output, process_input, process_kill"`
	Running      *bool  `json:"running,omitempty" jsonschema:"background only"`
	DroppedChars *int64 `json:"dropped_chars,omitempty" jsonschema:"background only"`
}

// maxCommandBytes is the kernel's limit on one argument (MAX_ARG_STRLEN):
// `bash -c COMMAND` cannot carry more.
const maxCommandBytes = 128*1024 - 1

// progressEvery is how often a long command reports that it is alive.
const progressEvery = 2 * time.Second

// Bash runs `bash -c COMMAND` under the call's policy.
func (tb *Toolbox) Bash(ctx context.Context, call Call, in BashInput) (*Result, *ToolError) {
	call = tb.pin(call)
	if strings.TrimSpace(in.Command) == "" {
		return nil, invalid("command is empty: give the shell command to run")
	}
	if len(in.Command) > maxCommandBytes {
		return nil, invalid("command is %d bytes; the limit is %d (the kernel's limit for one argument): write the script to a file and run that", len(in.Command), maxCommandBytes)
	}
	if strings.IndexByte(in.Command, 0) >= 0 {
		return nil, invalid("command contains a NUL byte")
	}
	timeout := call.conf().BashTimeout
	switch {
	case in.TimeoutMs < 0 || time.Duration(in.TimeoutMs)*time.Millisecond > MaxBashTimeout:
		return nil, invalid("timeout_ms must be between 1 and %d", MaxBashTimeout.Milliseconds())
	case in.TimeoutMs > 0:
		timeout = time.Duration(in.TimeoutMs) * time.Millisecond
	}
	switch {
	case !in.Background && (in.TTY || in.YieldMs != 0):
		return nil, invalid("tty and yield_ms are for background commands: add background: true")
	case in.Background && in.TimeoutMs != 0:
		return nil, invalid("timeout_ms is for foreground commands: a background command runs until it exits or process_kill ends it")
	case in.YieldMs < 0 || time.Duration(in.YieldMs)*time.Millisecond > MaxYield:
		return nil, invalid("yield_ms must be between 1 and %d", MaxYield.Milliseconds())
	}
	var approved approvedEffect
	pol, terr := tb.authorize(ctx, call, authRequest{tool: NameBash, subject: in.Command, command: in.Command, Escalation: in.Escalation, background: in.Background,
		effect: func(pol sandbox.ExecutionPolicy) (Effect, *ToolError) {
			return bashEffect(pol, in.Cwd, in.Command, envPath(commandEnv(call.conf(), false)))
		}, approved: &approved})
	if terr != nil {
		return nil, terr
	}
	if terr := refusedPolicy(pol); terr != nil {
		return nil, terr
	}
	cwd, terr := resolveCwd(pol.WorkspaceRoot, in.Cwd)
	if terr != nil {
		return nil, terr
	}
	call.Session.record(call.conf().Logger, sessionlog.EventToolCall, map[string]any{"tool": NameBash, "command": in.Command, "cwd": cwd, "mode": pol.Mode, "background": in.Background})
	var res *Result
	if terr := approved.check(); terr != nil {
		// What the human approved is not what would run: nothing runs.
		call.Session.record(call.conf().Logger, sessionlog.EventToolResult, map[string]any{"tool": NameBash, "error": terr.Code})
		return nil, terr
	}
	if in.Background {
		res, terr = tb.startBackground(ctx, call, pol, in, cwd)
	} else {
		// Without an explicit timeout_ms, a command that outruns the
		// default goes on in the background rather than being killed;
		// not an escalated one: the human approved a call, and the
		// question did not say it would outlive it.
		res, terr = tb.runBash(ctx, call, pol, in.Command, cwd, timeout, in.TimeoutMs == 0 && in.SandboxPermissions == "")
	}
	summary := map[string]any{"tool": NameBash}
	if terr != nil {
		summary["error"] = terr.Code
		if len(terr.hostKept) > 0 {
			summary["host_kept"] = terr.hostKept
		}
	} else {
		summary["exit_code"] = res.Structured["exit_code"]
	}
	call.Session.record(call.conf().Logger, sessionlog.EventToolResult, summary)
	return res, terr
}

func resolveCwd(workspace, cwd string) (string, *ToolError) {
	if cwd == "" {
		return workspace, nil
	}
	if strings.IndexByte(cwd, 0) >= 0 {
		return "", invalid("cwd contains a NUL byte")
	}
	if !filepath.IsAbs(cwd) {
		cwd = filepath.Join(workspace, cwd)
	}
	fi, err := os.Stat(cwd)
	switch {
	case err != nil:
		return "", errorf(CodeNotFound, "cwd %s does not exist: give an existing directory (relative paths start at the workspace %s)", cwd, workspace)
	case !fi.IsDir():
		return "", invalid("cwd %s is not a directory", cwd)
	}
	return filepath.Clean(cwd), nil
}

func (tb *Toolbox) runBash(ctx context.Context, call Call, pol sandbox.ExecutionPolicy, command, cwd string, timeout time.Duration, mayHandOver bool) (*Result, *ToolError) {
	conf := call.conf()
	out := NewOutputBuffer(call.outputCap())
	sink := &switchWriter{w: out}
	mayHandOver = mayHandOver && call.Session != nil
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if !mayHandOver {
		runCtx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	runCtx, narrowed := context.WithCancelCause(runCtx)
	defer narrowed(nil)
	var handOver func(*sandbox.Process) bool
	var handedOver atomic.Bool
	var handed *bgProcess
	var refusal *ToolError
	if call.Session != nil {
		started := call.sessionMode()
		defer call.Session.foreground.add(&foregroundRun{mode: pol.Mode, sessionMode: started, cancel: narrowed})()
		finished := make(chan struct{})
		defer close(finished)
		if endedByNarrowing(call, pol.Mode) {
			// Narrowed since the call read the mode (while a question
			// was open): registered first, so a narrowing after this
			// check finds the run; refused here, so it never starts.
			now := sessionMode(call)
			return nil, denial(NameBash, now, fmt.Sprintf(
				"the session's mode was narrowed to %s after this call began under %s: the command did not run", now, pol.Mode))
		}
		go watchNarrowing(call, pol.Mode, started, finished, func() { narrowed(errModeNarrowed) })
		if mayHandOver {
			adopt := tb.handOver(call, pol, command, cwd, started, sink, &refusal)
			handOver = func(p *sandbox.Process) bool {
				var ok bool
				handed, ok = adopt(p)
				handedOver.Store(ok)
				return ok
			}
		}
	}
	// Once handed over, the command has no call to ask the human in: the
	// lists decide alone, as for any background process.
	hooks := tb.egressHooks(ctx, call, pol, command)
	if ask := hooks.Ask; ask != nil {
		hooks.Ask = func(c context.Context, host string, port int) egress.Answer {
			if handedOver.Load() {
				return egress.Refuse
			}
			return ask(c, host, port)
		}
	}
	start := time.Now()
	stopProgress := reportProgress(call, start, out)
	res, err := conf.Executor.Run(runCtx, pol, sandbox.RunSpec{
		Argv: []string{"bash", "-c", command}, Dir: cwd,
		Env:    commandEnv(conf, false),
		Stdout: sink, Stderr: sink,
		HandOverAfter: timeout, HandOver: handOver,
		// The command leads its own process group, so a timeout or a
		// cancellation kills it and everything it started.
		OwnGroup: true,
		// A grandchild that keeps the output pipe open must not hold the call.
		WaitDelay: 2 * time.Second,
		Egress:    hooks,
	})
	stopProgress()
	if err != nil {
		var never *sandbox.NeverRanError
		if errors.As(err, &never) {
			return nil, unavailable(pol.Mode, err)
		}
		return nil, errorf(CodeRunnerFailed, "starting the command: %v", err)
	}
	out.Close()
	text, truncated, _ := out.String()
	fields := BashOutput{
		ExitCode: res.ExitCode, Output: text, TimedOut: res.Ending == sandbox.TimedOut || res.Ending == sandbox.Cancelled,
		Truncated: truncated, Mode: pol.Mode, Backend: res.Backend, Enforcement: res.Enforcement, Denied: res.Ending == sandbox.Denied,
		BlockedHosts: res.BlockedHosts,
	}
	fail := func(e *ToolError) (*Result, *ToolError) {
		e.hostKept = hostKept(res.Undone)
		if len(res.BlockedHosts) > 0 {
			e.Message = strings.TrimRight(e.Message, "\n") + "\n" + blockedLine(res.BlockedHosts)
		}
		e.Fields = structured(fields)
		return nil, e
	}
	switch res.Ending {
	case sandbox.RunnerFailed:
		return fail(&ToolError{Code: CodeRunnerFailed,
			Message: fmt.Sprintf("the sandbox runner (%s) failed before the command started: %s\n%s", res.Backend, res.RunnerFailure, text)})
	case sandbox.HandedOver:
		running := true
		fields.ProcessID, fields.Running = handed.id, &running
		msg := text
		if msg != "" && !strings.HasSuffix(msg, "\n") {
			msg += "\n"
		}
		note := fmt.Sprintf("[still running after %s: it goes on as background process %s; process_output waits for more and tells how it ends, process_kill ends it]", timeout, handed.id)
		msg += note
		// The same words in structuredContent, which is all some clients'
		// models see.
		fields.Notes = append(fields.Notes, note)
		return &Result{Text: msg, Structured: structured(fields)}, nil
	case sandbox.TimedOut, sandbox.Cancelled:
		why := fmt.Sprintf("timed out after %s", timeout)
		if refusal != nil {
			why += " and could not go on in the background (" + refusal.Message + ")"
		}
		switch {
		case errors.Is(context.Cause(runCtx), errModeNarrowed):
			// The human narrowed the session's mode while it ran: it is
			// refused what it was doing, as a command started now would be.
			now := sessionMode(call)
			fields.TimedOut, fields.Denied = false, true
			return fail(denial(NameBash, now, fmt.Sprintf(
				"the session's mode was narrowed to %s while the command ran under %s: cordon killed it and every process it started (mode-narrowed); its output:\n%s", now, pol.Mode, text)))
		case res.Ending == sandbox.Cancelled || ctx.Err() != nil:
			why = "cancelled"
		}
		return fail(&ToolError{Code: CodeTimeout,
			Message: fmt.Sprintf("the command %s; it and every process it started were killed\n%s", why, text)})
	case sandbox.ProtectionLost:
		what := fmt.Sprintf("%s, which the sandbox kept protected, was replaced, removed or moved on the host while the command ran (the human's tools rewrite files so): cordon killed the sandbox and every process in it (protection-lost); run the command again", lostWhat(res.LostPath))
		if len(res.Undone) > 0 || res.GuardErr != nil {
			what += "\n" + undoneMessage(res.Outcome, "")
		}
		return fail(denial(NameBash, pol.Mode, what+"; its output:\n"+text))
	case sandbox.Denied:
		what := fmt.Sprintf("the command exited %d after the sandbox refused an operation; its output:\n%s", res.ExitCode, text)
		if len(res.Undone) > 0 || res.GuardErr != nil {
			what = undoneMessage(res.Outcome, text)
		}
		if pol.RootsBeforeClient != nil {
			// Which path was refused is not known here: say what the
			// client's roots took away beside the usual hint.
			return fail(denial(NameBash, pol.Mode, what, narrowedLine(pol)))
		}
		return fail(denial(NameBash, pol.Mode, what))
	}
	msg := text
	addLine := func(line string) {
		if msg != "" && !strings.HasSuffix(msg, "\n") {
			msg += "\n"
		}
		msg += line
	}
	if res.ExitCode != 0 {
		addLine(fmt.Sprintf("[exit code %d]", res.ExitCode))
		if res.Backend == "bwrap" {
			for _, n := range hostTmpNotes(command, pol.TmpDir) {
				fields.Notes = append(fields.Notes, n)
				addLine(n)
			}
		}
	}
	if len(res.BlockedHosts) > 0 {
		addLine(blockedLine(res.BlockedHosts))
	}
	if notes := protectedNotes(res, pol, text); len(notes) > 0 {
		fields.Notes = notes
		for _, n := range notes {
			addLine(n)
		}
	}
	return &Result{Text: msg, Structured: structured(fields)}, nil
}

// reportProgress tells a client that asked for progress, every
// progressEvery, that the command is alive and the last line it wrote. The
// returned func stops it.
func reportProgress(call Call, start time.Time, out *OutputBuffer) func() {
	if call.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		ticker := time.NewTicker(progressEvery)
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
				msg := fmt.Sprintf("running for %s", time.Since(start).Round(time.Second))
				if last := out.LastLine(); last != "" {
					msg += ": " + last
				}
				call.Progress(time.Since(start).Seconds(), msg)
			}
		}
	}()
	return func() { close(done) }
}

// undoneMessage says what the guard undid after the command: writes to
// protected paths that the backend could not refuse while it ran.
func undoneMessage(o sandbox.Outcome, output string) string {
	var b strings.Builder
	what := "restored"
	if slices.ContainsFunc(o.Undone, func(c sandbox.Change) bool { return c.What == "disarmed" }) {
		what = "undid (restored, or disarmed and set aside)"
	}
	if len(hostKept(o.Undone)) == len(o.Undone) {
		// Only the host's changes: the command may have written nothing.
		fmt.Fprintf(&b, "the command exited %d; protected paths changed while it ran, and cordon restored them after it (they name code that a human would run later outside the sandbox):\n", o.ExitCode)
	} else {
		fmt.Fprintf(&b, "the command exited %d, and it had written to protected paths, which cordon %s after it (they name code that a human would run later outside the sandbox):\n", o.ExitCode, what)
	}
	for _, c := range o.Undone {
		b.WriteString("  " + c.String() + "\n")
	}
	for _, c := range o.Undone {
		if note := c.HostNote(); note != "" {
			b.WriteString(note + "\n")
		}
	}
	if o.GuardErr != nil {
		fmt.Fprintf(&b, "cordon could not restore everything: %v\n", o.GuardErr)
	}
	b.WriteString("its output:\n" + output)
	return b.String()
}

// hostKept lists where the guard set the host's versions of protected
// paths aside (sandbox.Change.HostNote), for the session log.
func hostKept(undone []sandbox.Change) []string {
	var kept []string
	for _, c := range undone {
		if c.HostKept != "" {
			kept = append(kept, c.Path+" -> "+c.HostKept)
		}
	}
	return kept
}

// protectedNotes explain a refusal that the command got over and still
// succeeded (husky's `git config core.hooksPath` in an npm install): the
// path it could not write is protected, and why.
func protectedNotes(res sandbox.RunResult, pol sandbox.ExecutionPolicy, output string) []string {
	if !pol.Mode.Confined() || !res.RefusalSeen {
		return nil
	}
	var notes []string
	for _, p := range pol.Protected {
		shown := displayPath(pol, p)
		if strings.Contains(output, p) || (shown != p && strings.Contains(output, shown)) {
			notes = append(notes, fmt.Sprintf("[sandbox: %s is protected: it names code a human runs later outside the sandbox, so only the human changes it]", shown))
		}
	}
	return notes
}

// unavailable reports a command that no backend could confine: it did not
// run at all.
func unavailable(mode sandbox.Mode, err error) *ToolError {
	var ue *sandbox.UnavailableError
	if errors.As(err, &ue) {
		return &ToolError{Code: CodeUnavailable, Denied: true, Message: fmt.Sprintf(
			"%s\nsandbox unavailable: %s\nThe command did not run. The human can install bubblewrap, fix the backend (see `cordon status`), or restart cordon with --sandbox to run unconfined.",
			DenialMarker(mode), ue.Reason)}
	}
	return &ToolError{Code: CodeUnavailable, Denied: true, Message: fmt.Sprintf("%s\nthe sandbox refused to start: %v\nThe command did not run.", DenialMarker(mode), err)}
}

// commandEnv is a confined command's environment: the allowlist and the
// configured passthrough; a terminal of its own is a plain one (its escape
// sequences are stripped from the output anyway).
func commandEnv(conf Config, tty bool) []string {
	env := withoutSecretValues(sandbox.Environ(os.Environ(), conf.EnvPassthrough), conf.Secrets)
	if !tty {
		return env
	}
	out := slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "TERM=") })
	return append(out, "TERM=dumb")
}

// envPath is the PATH of an environment.
func envPath(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			return v
		}
	}
	return ""
}
