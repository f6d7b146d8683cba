package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
)

// Question is what a tool asks the human before a call proceeds.
type Question struct {
	Tool    string
	Subject string // the command or the path
	Current sandbox.Mode
	// Target is the mode an escalation asks for; "" when the approval
	// policy asks about the call itself (a dangerous command, "always").
	Target        sandbox.Mode
	Justification string
	// Reason is why the approval gate asks.
	Reason string
	// AllowSession says whether allow_session may be offered.
	AllowSession bool
	// Background says the command runs on after the call, until it exits
	// or is killed: the human is told.
	Background bool
	// Host, when set, is the host:port a running command (network
	// restricted) wants to connect to, which no list names: the human is
	// asked about the host, not the command.
	Host string
	// HostNote says what an IP address in Host is when it is not an
	// ordinary public one ("this machine (loopback)"): cordon's words.
	HostNote string
	// Effect is what the call resolves to (effect.go): the human is shown
	// it, and cordon checks before the launch that it is still so.
	Effect Effect
}

// authRequest is what a call puts to the approval gate.
type authRequest struct {
	tool    string
	subject string // the command or path shown to the human
	command string // what the dangerous-command rules read ("" for a path)
	Escalation
	background bool
	// effect works out what the call resolves to, for the question; nil
	// for none. approved receives what was shown, to check at the launch.
	effect   func(sandbox.ExecutionPolicy) (Effect, *ToolError)
	approved *approvedEffect
}

// SubjectLabel names the subject in the dialog: "Command" for bash,
// "Input" for process_input, "Path" for the file tools.
func (q Question) SubjectLabel() string {
	switch q.Tool {
	case NameBash:
		return "Command"
	case NameProcessInput:
		return "Input"
	}
	return "Path"
}

// ShownSubject is the subject as the dialog shows it: a command or an
// input keeps its lines, a path is one line.
func (q Question) ShownSubject() approval.Shown {
	if q.SubjectLabel() == "Path" {
		return approval.ShowLine(q.Subject)
	}
	return approval.ShowText(q.Subject)
}

// Displayable says why the dialog cannot show this question whole, or
// nil. cordon never cuts what it asks about, so such a question is not
// asked: the call is refused before anyone is, and the error tells the
// model what to ask for instead.
func (q Question) Displayable() error {
	if s := q.ShownSubject(); !s.Fits() {
		what := strings.ToLower(q.SubjectLabel())
		instead := "write the command to a script file in the workspace and ask to run that file instead (bash ./task.sh): " +
			"the human is then asked about one short line and can read the file before answering"
		switch what {
		case "path":
			instead = "use a shorter path"
		case "input":
			instead = "send the input in smaller pieces"
		}
		return fmt.Errorf("the %s is too long to show the human whole in the approval dialog "+
			"(%d characters on %d lines as shown; the dialog shows at most %d characters on %d lines), and cordon never asks about a cut one: %s",
			what, s.Chars, len(s.Lines), approval.MaxShownChars, approval.MaxShownLines, instead)
	}
	if n := q.Effect.shownChars(); n > approval.MaxShownChars {
		return fmt.Errorf("the command names too many files the agent can write, or paths too long, to show the human whole in the approval dialog "+
			"(%d characters as shown; at most %d): write one script that does it all in the workspace and ask to run that file instead (bash ./task.sh)",
			n, approval.MaxShownChars)
	}
	if j := approval.ShowLine(q.Justification); j.Chars > approval.MaxJustificationChars {
		return fmt.Errorf("the justification is %d characters as shown; the approval dialog shows at most %d: say in one sentence why the call needs wider access",
			j.Chars, approval.MaxJustificationChars)
	}
	return nil
}

// Escalation are the arguments with which a call of a tool that writes
// asks for wider access (SPEC §5, Escalation).
type Escalation struct {
	SandboxPermissions string `json:"sandbox_permissions,omitempty" jsonschema:"Ask the human for wider access for this call: the target mode. Requires justification. Only after a denial." schema:"enum=EscalationModes"`
	Justification      string `json:"justification,omitempty" jsonschema:"One sentence telling the human why this call needs wider access. Requires sandbox_permissions."`
}

// Asker asks the human. mcpserver implements it with MCP elicitation.
type Asker interface {
	Ask(ctx context.Context, q Question) (approval.Answer, error)
}

// ErrPending means the question went to the client as a multi round-trip
// request: the call ends now and comes back with the answer.
var ErrPending = errors.New("approval pending: the question was sent to the client")

// PendingError is returned (as a *ToolError with Pending set) when the
// call must end to wait for the human's answer.
func isPending(e *ToolError) bool { return e != nil && e.Code == codePending }

const codePending = "APPROVAL_PENDING"

// IsPending reports whether a tool error means "waiting for the human".
func IsPending(e *ToolError) bool { return isPending(e) }

// authorize runs the escalation ladder and the approval gate for one call
// of a tool that can write, and returns the policy the call runs under. It
// has no side effects before the human's answer except the log's
// approval/request line: a retried call may ask again. A question the
// dialog cannot show whole is refused before that line (INVALID_ARGUMENT).
func (tb *Toolbox) authorize(ctx context.Context, call Call, r authRequest) (sandbox.ExecutionPolicy, *ToolError) {
	tool, subject, command := r.tool, r.subject, r.command
	target, justification, err := parseEscalation(r.SandboxPermissions, r.Justification)
	if err != nil {
		return sandbox.ExecutionPolicy{}, invalid("%v", err)
	}
	pol, terr := tb.resolve(call, "")
	if terr != nil {
		return pol, terr
	}
	if target != "" {
		if err := canEscalateTo(pol.Mode, target); err != nil {
			return pol, invalid("%v", err)
		}
		if c, ok := call.Session.ceiling(); ok && target.WiderThan(c) {
			return pol, &ToolError{Code: CodeEscalationDenied,
				Message: DenialMarker(pol.Mode) + "\n" + fmt.Sprintf("this is a delegated session: its mode can never be wider than its parent's (%s)", c) + "\n" + NotApprovedLine(target),
				Denied:  true}
		}
	}
	d := call.conf().Gate.Decide(approval.Call{Tool: tool, ReadOnly: readOnly[tool], Command: command, Escalate: target})
	switch d.Action {
	case approval.Allow:
		return pol, nil
	case approval.Refuse:
		return pol, tb.noApprover(call.Session, pol.Mode, target, d.Reason)
	}
	if call.Asker == nil {
		return pol, tb.noApprover(call.Session, pol.Mode, target, "the client cannot show approval requests (it declared no MCP elicitation capability)")
	}
	q := Question{Tool: tool, Subject: subject, Current: pol.Mode, Target: target, Justification: justification,
		Reason: d.Reason, AllowSession: target != "" && call.Session.AllowSession, Background: r.background}
	if err := q.Displayable(); err != nil {
		// Refused before the log's approval/request line and before the
		// human is asked: nothing happened, and the model can fix it.
		return pol, invalid("%v", err)
	}
	if r.effect != nil {
		if q.Effect, terr = r.effect(pol); terr != nil {
			return pol, terr
		}
		if err := q.Displayable(); err != nil {
			return pol, invalid("%v", err)
		}
	}
	if a, ok := call.Asker.(interface{ Answered() bool }); !ok || !a.Answered() {
		// A multi round-trip retry brings the answer to a question that
		// was already logged when it was asked.
		fields := map[string]any{
			"tool": tool, "subject": subject, "current": pol.Mode, "target": target, "justification": justification, "reason": d.Reason}
		q.Effect.logFields(fields)
		call.Session.record(call.conf().Logger, sessionlog.EventApprovalRequest, fields)
	}
	decision, err := call.Asker.Ask(ctx, q)
	switch {
	case errors.Is(err, ErrPending):
		return pol, &ToolError{Code: codePending, Message: "waiting for the human's answer"}
	case err != nil:
		call.logger().Info().Err(err).Str("tool", tool).Msg("approval not obtained")
		decision = approval.Deny
	}
	outcome := map[string]any{"tool": tool, "subject": subject, "target": target, "decision": decision}
	if err != nil {
		outcome["error"] = err.Error()
	}
	if err := call.Session.recordSync(sessionlog.EventApprovalOutcome, outcome); err != nil {
		return pol, errorf(CodeUnavailable, "cannot record the approval in the session log, so the call does not proceed: %v", err)
	}
	if decision == approval.AllowOnce || decision == approval.AllowSession {
		if terr := pinEffect(call, r, q, pol, target); terr != nil {
			return pol, terr
		}
	}
	switch decision {
	case approval.AllowOnce:
	case approval.AllowSession:
		if target != "" && q.AllowSession {
			if err := call.Session.setMode(target, sessionlog.SourceEscalation); err != nil {
				return pol, errorf(CodeUnavailable, "%v; the call does not proceed", err)
			}
			if call.read != nil {
				call.read.mode = target
			}
		}
	default:
		msg := "the human did not approve this call"
		if err != nil {
			msg = fmt.Sprintf("no approval: %v", err)
		}
		lines := DenialMarker(pol.Mode) + "\n" + msg + " (" + subject + ")"
		if target != "" {
			lines += "\n" + NotApprovedLine(target)
		}
		return pol, &ToolError{Code: CodeEscalationDenied, Message: lines, Denied: true}
	}
	if terr := narrowedWhileAsked(call, pol.Mode, target); terr != nil {
		return pol, terr
	}
	if target == "" {
		return pol, nil
	}
	return tb.resolve(call, target)
}

// narrowedWhileAsked refuses a call whose session's mode (or parent's)
// narrowed while the human was being asked: the answer was to a question
// about a wider session than there is now (SPEC §6, "One call, one mode").
func narrowedWhileAsked(call Call, mode, target sandbox.Mode) *ToolError {
	runs := mode
	if target != "" {
		runs = target
	}
	if !endedByNarrowing(call, runs) {
		return nil
	}
	now := sessionMode(call)
	return &ToolError{Code: CodeEscalationDenied, Denied: true, Message: DenialMarker(now) + "\n" + fmt.Sprintf(
		"the session's mode was narrowed to %s while the question was open: the call, asked about under %s, did not run", now, mode)}
}

// noApprover fails closed and tells the human how to widen the mode
// themselves: wider access is never granted silently.
func (tb *Toolbox) noApprover(s *Session, mode, target sandbox.Mode, why string) *ToolError {
	msg := DenialMarker(mode) + "\n" + why + "."
	if target != "" {
		msg += "\n" + fmt.Sprintf("Wider access needs the human: restart cordon with --mode %s (or set mode = %q in ~/.config/cordon/config.toml)", target, target)
		if s.Log != nil {
			msg += fmt.Sprintf(", or run `cordon mode --session %s %s` from a terminal", s.ID, target)
		}
		msg += "."
	} else {
		msg += "\nThe approval policy asks before this call; run cordon with --approval on-request (or approval = \"on-request\" in the config) to stop asking for commands like this one."
	}
	return &ToolError{Code: CodeNoApprover, Message: msg, Denied: true}
}
