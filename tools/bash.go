package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
)

// BashInput are the bash tool's arguments.
type BashInput struct {
	Command            string `json:"command"`
	Cwd                string `json:"cwd,omitempty"`
	TimeoutMs          int    `json:"timeout_ms,omitempty"`
	SandboxPermissions string `json:"sandbox_permissions,omitempty"`
	Justification      string `json:"justification,omitempty"`
}

// maxCommandBytes is the kernel's limit on one argument (MAX_ARG_STRLEN):
// `bash -c COMMAND` cannot carry more.
const maxCommandBytes = 128*1024 - 1

// progressEvery is how often a long command reports that it is alive.
const progressEvery = 2 * time.Second

// Bash runs `bash -c COMMAND` under the call's policy.
func (tb *Toolbox) Bash(ctx context.Context, call Call, in BashInput) (*Result, *ToolError) {
	if strings.TrimSpace(in.Command) == "" {
		return nil, invalid("command is empty: give the shell command to run")
	}
	if len(in.Command) > maxCommandBytes {
		return nil, invalid("command is %d bytes; the limit is %d (the kernel's limit for one argument): write the script to a file and run that", len(in.Command), maxCommandBytes)
	}
	if strings.IndexByte(in.Command, 0) >= 0 {
		return nil, invalid("command contains a NUL byte")
	}
	timeout := tb.conf().BashTimeout
	switch {
	case in.TimeoutMs < 0 || time.Duration(in.TimeoutMs)*time.Millisecond > MaxBashTimeout:
		return nil, invalid("timeout_ms must be between 1 and %d", MaxBashTimeout.Milliseconds())
	case in.TimeoutMs > 0:
		timeout = time.Duration(in.TimeoutMs) * time.Millisecond
	}
	pol, terr := tb.authorize(ctx, call, "bash", in.Command, in.Command, in.SandboxPermissions, in.Justification)
	if terr != nil {
		return nil, terr
	}
	cwd, terr := resolveCwd(pol.WorkspaceRoot, in.Cwd)
	if terr != nil {
		return nil, terr
	}
	call.Session.record(tb.conf().Logger, sessionlog.EventToolCall, map[string]any{"tool": "bash", "command": in.Command, "cwd": cwd, "mode": pol.Mode})
	res, terr := tb.runBash(ctx, call, pol, in.Command, cwd, timeout)
	summary := map[string]any{"tool": "bash"}
	if terr != nil {
		summary["error"] = terr.Code
	} else {
		summary["exit_code"] = res.Structured["exit_code"]
	}
	call.Session.record(tb.conf().Logger, sessionlog.EventToolResult, summary)
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
		return "", errorf(sandbox.CodeNotFound, "cwd %s does not exist: give an existing directory (relative paths start at the workspace %s)", cwd, workspace)
	case !fi.IsDir():
		return "", invalid("cwd %s is not a directory", cwd)
	}
	return filepath.Clean(cwd), nil
}

func (tb *Toolbox) runBash(ctx context.Context, call Call, pol sandbox.ExecutionPolicy, command, cwd string, timeout time.Duration) (*Result, *ToolError) {
	confined, err := tb.conf().Executor.Prepare([]string{"bash", "-c", command}, pol)
	if err != nil {
		return nil, unavailable(pol.Mode, err)
	}
	launch, err := confined.NewLaunch()
	if err != nil {
		confined.Cleanup()
		return nil, errorf(sandbox.CodeRunnerFailed, "%v", err)
	}
	out := NewOutputBuffer(tb.conf().MaxOutput)
	cmd := launch.Cmd
	cmd.Stdout, cmd.Stderr, cmd.Dir = out, out, cwd
	cmd.Env = sandbox.Environ(os.Environ(), tb.conf().EnvPassthrough)
	// The command leads its own process group, so a timeout or a
	// cancellation kills it and everything it started.
	launch.OwnGroup = true
	// A grandchild that keeps the output pipe open must not hold the call.
	cmd.WaitDelay = 2 * time.Second

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	if err := launch.Start(); err != nil {
		return nil, errorf(sandbox.CodeRunnerFailed, "starting the command: %v", err)
	}
	done := make(chan struct{})
	go func() {
		ticker := time.NewTicker(progressEvery)
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-runCtx.Done():
				launch.Kill()
				return
			case <-ticker.C:
				if call.Progress != nil {
					call.Progress(time.Since(start).Seconds(), fmt.Sprintf("running for %s", time.Since(start).Round(time.Second)))
				}
			}
		}
	}()
	outcome, waitErr := launch.Wait()
	close(done)
	// Whatever the command left behind in its group goes with it.
	launch.Kill()

	out.Close()
	text, truncated, _ := out.String()
	timedOut := runCtx.Err() != nil
	if outcome.RunnerFailure == "" && confined.Backend != "none" && !confined.ReportsRunnerStatus() {
		// A backend without cordon's helper (Seatbelt) is judged by its
		// runner-failure rules, before any denial signature.
		if sig, ok := sandbox.MatchAny(confined.RunnerFailureRules, outcome.ExitCode, text); ok {
			outcome.RunnerFailure = "the runner reported: " + sig
		}
	}
	fields := map[string]any{
		"exit_code": outcome.ExitCode, "output": text, "timed_out": timedOut, "truncated": truncated,
		"mode": pol.Mode, "backend": confined.Backend, "enforcement": confined.Enforcement, "denied": false,
	}
	switch {
	case waitErr != nil && !timedOut:
		return nil, &ToolError{Code: sandbox.CodeRunnerFailed, Message: fmt.Sprintf("waiting for the command: %v", waitErr), Fields: fields}
	case outcome.RunnerFailure != "" && !timedOut:
		return nil, &ToolError{Code: sandbox.CodeRunnerFailed,
			Message: fmt.Sprintf("the sandbox runner (%s) failed before the command started: %s\n%s", confined.Backend, outcome.RunnerFailure, text),
			Fields:  fields}
	case timedOut:
		why := fmt.Sprintf("timed out after %s", timeout)
		if ctx.Err() != nil {
			why = "cancelled"
		}
		return nil, &ToolError{Code: sandbox.CodeTimeout,
			Message: fmt.Sprintf("the command %s; it and every process it started were killed\n%s", why, text), Fields: fields}
	case len(outcome.Undone) > 0 || outcome.GuardErr != nil:
		fields["denied"] = true
		e := denial("bash", pol.Mode, undoneMessage(outcome, text))
		e.Fields = fields
		return nil, e
	case outcome.ExitCode != 0 && pol.Mode.Confined() && confined.Backend != "none" && looksDenied(confined, pol, text):
		fields["denied"] = true
		e := denial("bash", pol.Mode,
			fmt.Sprintf("the command exited %d after the sandbox refused an operation; its output:\n%s", outcome.ExitCode, text))
		e.Fields = fields
		return nil, e
	}
	msg := text
	addLine := func(line string) {
		if msg != "" && !strings.HasSuffix(msg, "\n") {
			msg += "\n"
		}
		msg += line
	}
	if outcome.ExitCode != 0 {
		addLine(fmt.Sprintf("[exit code %d]", outcome.ExitCode))
	}
	if notes := protectedNotes(confined, pol, text); len(notes) > 0 {
		fields["notes"] = notes
		for _, n := range notes {
			addLine(n)
		}
	}
	return &Result{Text: msg, Structured: fields}, nil
}

// protectedNotes explain a refusal that the command got over and still
// succeeded (husky's `git config core.hooksPath` in an npm install): the
// path it could not write is protected, and why.
func protectedNotes(c *sandbox.ConfinedArgv, pol sandbox.ExecutionPolicy, output string) []string {
	if !pol.Mode.Confined() || c.Backend == "none" ||
		!(sandbox.LooksDenied(c.DenialSignatures, output) || strings.Contains(output, "Device or resource busy")) {
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

// undoneMessage says what the guard undid after the command: writes to
// protected paths that the backend could not refuse while it ran.
func undoneMessage(o sandbox.Outcome, output string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the command exited %d, and it had written to protected paths, which cordon restored after it (they name code that a human would run later outside the sandbox):\n", o.ExitCode)
	for _, c := range o.Undone {
		b.WriteString("  " + c.String() + "\n")
	}
	if o.GuardErr != nil {
		fmt.Fprintf(&b, "cordon could not restore everything: %v\n", o.GuardErr)
	}
	b.WriteString("its output:\n" + output)
	return b.String()
}

// looksDenied tells a sandbox refusal from an ordinary failure: one of the
// backend's denial signatures, or "Is a directory" naming a protected path
// (a missing protected path is covered by an empty read-only directory).
func looksDenied(c *sandbox.ConfinedArgv, pol sandbox.ExecutionPolicy, output string) bool {
	if sandbox.LooksDenied(c.DenialSignatures, output) {
		return true
	}
	if !strings.Contains(output, "Is a directory") {
		return false
	}
	for _, p := range pol.Protected {
		if strings.Contains(output, filepath.Base(p)) {
			return true
		}
	}
	return false
}

// unavailable reports a command that no backend could confine: it did not
// run at all.
func unavailable(mode sandbox.Mode, err error) *ToolError {
	var ue *sandbox.UnavailableError
	if errors.As(err, &ue) {
		return &ToolError{Code: sandbox.CodeUnavailable, Denied: true, Message: fmt.Sprintf(
			"%s\nsandbox unavailable: %s\nThe command did not run. The human can install bubblewrap, fix the backend (see `cordon status`), or restart cordon with --sandbox to run unconfined.",
			sandbox.DenialMarker(mode), ue.Reason)}
	}
	return &ToolError{Code: sandbox.CodeUnavailable, Denied: true, Message: fmt.Sprintf("%s\nthe sandbox refused to start: %v\nThe command did not run.", sandbox.DenialMarker(mode), err)}
}
