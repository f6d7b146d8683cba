package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/internal/defaults"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// decisionField is the one field of the approval form.
const decisionField = "decision"

// clientCanElicit checks the client's declared capabilities itself, for
// either era: mcp-go sends elicitation requests without checking, and an
// undeclared request breaks the call.
func clientCanElicit(ctx context.Context) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.ClientCapabilities != nil && info.ClientCapabilities.Elicitation != nil
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return s.GetClientCapabilities().Elicitation != nil
	}
	return false
}

// asker implements tools.Asker for one tool call.
type asker struct {
	srv    *Server
	modern bool
	// answer is the human's decision carried by a verified multi
	// round-trip retry, for the question whose target it names.
	answer *answer
	// pending is the question to hand to a modern client.
	pending *tools.Question
}

type answer struct {
	target   sandbox.Mode
	current  sandbox.Mode // the session's mode the question was asked under
	decision approval.Answer
	// pins are the fingerprints of the question the human answered.
	pins string
}

// Answered says whether this call carries the human's answer (a verified
// multi round-trip retry), so the question is not logged twice.
func (a *asker) Answered() bool { return a.answer != nil }

// AskedPins are the fingerprints of what the question of a multi
// round-trip retry showed, from its signed state: the approved call is
// checked against them, not against what is there on the retry.
func (a *asker) AskedPins() (string, bool) {
	if a.answer == nil {
		return "", false
	}
	return a.answer.pins, true
}

// Ask asks the human. Legacy clients get a server-initiated
// elicitation/create, bounded by approval_timeout; modern (2026-07-28)
// clients get the question back as an input_required result, and the call
// returns until they retry with the answer.
func (a *asker) Ask(ctx context.Context, q tools.Question) (approval.Answer, error) {
	if a.answer == nil {
		a.srv.metrics.question()
	}
	d, err := a.ask(ctx, q)
	if !errors.Is(err, tools.ErrPending) {
		a.srv.metrics.answer(d)
	}
	return d, err
}

func (a *asker) ask(ctx context.Context, q tools.Question) (approval.Answer, error) {
	if err := q.Displayable(); err != nil {
		// The tool layer refuses such a question first; a cut one is
		// never shown.
		return approval.Deny, err
	}
	if q.Host != "" {
		return a.askHost(ctx, q)
	}
	if a.answer != nil {
		if a.answer.target != q.Target {
			return approval.Deny, errStateBinding
		}
		if a.answer.current != q.Current {
			return approval.Deny, errStateMode
		}
		return a.answer.decision, nil
	}
	if a.modern {
		a.pending = &q
		return "", tools.ErrPending
	}
	ctx, cancel := context.WithTimeout(ctx, a.srv.cfg.ApprovalTimeout)
	defer cancel()
	res, err := a.srv.mcp.RequestElicitation(ctx, mcp.ElicitationRequest{Params: elicitationParams(q)})
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return approval.Deny, fmt.Errorf("no answer within %s", a.srv.cfg.ApprovalTimeout)
		}
		return approval.Deny, err
	}
	return decisionOf(&res.ElicitationResponse), nil
}

// askHost asks about a host a running command wants to reach. Only a
// server-initiated elicitation can reach the human while the connection
// waits: a modern client is asked through the call's result, after the
// command ended, so there the host is refused.
func (a *asker) askHost(ctx context.Context, q tools.Question) (approval.Answer, error) {
	if a.modern {
		return approval.Deny, errors.New("the client answers questions only between calls, not while a command waits for a connection")
	}
	ctx, cancel := context.WithTimeout(ctx, a.srv.cfg.ApprovalTimeout)
	defer cancel()
	res, err := a.srv.mcp.RequestElicitation(ctx, mcp.ElicitationRequest{Params: elicitationParams(q)})
	if err != nil {
		return approval.Deny, err
	}
	return decisionOf(&res.ElicitationResponse), nil
}

func elicitationParams(q tools.Question) mcp.ElicitationParams {
	options := []string{string(approval.AllowOnce)}
	if q.AllowSession {
		options = append(options, string(approval.AllowSession))
	}
	options = append(options, string(approval.Deny))
	return mcp.ElicitationParams{
		Message: approvalMessage(q),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				decisionField: map[string]any{
					"type":        "string",
					"title":       "Decision",
					"description": "allow_once: this call only; allow_session: this and later calls of this session; deny: refuse",
					"enum":        options,
				},
			},
			"required": []string{decisionField},
		},
	}
}

// approvalMessage is what the human reads: what the agent asks for (or
// why cordon asks), the command or path with every character visible
// (approval.ShowText, ShowLine), the model's justification marked as its
// words, and the question. Only cordon's own lines start at the left
// margin: every line of a command or input is indented under a gutter,
// and the justification and the reason are each one line after cordon's
// label, so nothing the model wrote can pass for a line of cordon's
// (Command:, Allow it?, the mode line). Nothing is cut: the tool layer
// never asks a question that does not fit (tools.Question.Displayable).
// It never asks for secrets.
func approvalMessage(q tools.Question) string {
	var b strings.Builder
	if q.Host != "" {
		fmt.Fprintf(&b, "A command the agent runs (mode %s, network restricted) wants to connect to %s, which allowed_domains does not list.\n", q.Current, oneLine(q.Host))
		if q.HostNote != "" {
			fmt.Fprintf(&b, "That address is %s.\n", q.HostNote)
		}
	} else if q.Target != "" {
		fmt.Fprintf(&b, "The agent asks to run %s in %s mode (now %s).\n", q.Tool, q.Target, q.Current)
	} else {
		fmt.Fprintf(&b, "The agent wants to run %s (mode %s); cordon asks first: %s.\n", q.Tool, q.Current, oneLine(q.Reason))
	}
	if q.Background {
		b.WriteString("It runs in the background: it keeps running after this call, with this access, until it exits or is killed.\n")
	}
	label, shown := q.SubjectLabel(), q.ShownSubject()
	if label == "Path" {
		fmt.Fprintf(&b, "Path: \"%s\"\n", shown.Lines[0])
	} else {
		fmt.Fprintf(&b, "%s (%s):\n", label, count(shown.SourceLines, "line"))
		for _, line := range shown.Lines {
			if line == "" {
				b.WriteString(strings.TrimRight(gutter, " ") + "\n")
			} else {
				b.WriteString(gutter + line + "\n")
			}
		}
	}
	writeEffect(&b, q.Effect)
	if q.Justification != "" {
		fmt.Fprintf(&b, "Justification from the agent (its own words, not checked by cordon): \"%s\"\n", oneLine(q.Justification))
	}
	if q.Host != "" {
		fmt.Fprintf(&b, "allow_once: %s for the rest of this command; allow_session: for this session's later commands too.\nAllow the connection?", oneLine(q.Host))
		return b.String()
	}
	b.WriteString("Allow it?")
	return b.String()
}

// writeEffect says what the call resolves to (tools.Effect): the
// directory a command runs in, where a symlinked path leads, and the files
// the command runs that the agent can write. Each path is one line after
// cordon's words, every character visible.
func writeEffect(b *strings.Builder, e tools.Effect) {
	if e.Dir != "" {
		fmt.Fprintf(b, "Runs in: \"%s\"\n", oneLine(e.Dir))
	}
	for _, l := range e.Leads {
		fmt.Fprintf(b, "That path goes through a symlink: it leads to \"%s\", which is what the call writes.\n", oneLine(l.Target))
	}
	if len(e.Writable) == 0 {
		return
	}
	b.WriteString("It runs files that the agent can write (read them before answering; if one changes before the command starts, cordon refuses it):\n")
	for _, l := range e.Writable {
		fmt.Fprintf(b, "%s\"%s\"", gutter, oneLine(l.Path))
		if l.Target != "" {
			fmt.Fprintf(b, ", a symlink to \"%s\"", oneLine(l.Target))
		}
		if l.Absent {
			b.WriteString(" (does not exist yet)")
		}
		b.WriteString("\n")
	}
}

// gutter starts every line of a command or input in the dialog.
const gutter = "  │ "

// oneLine is s on one line, every character visible.
func oneLine(s string) string { return approval.ShowLine(s).Lines[0] }

// count is "1 line", "3 lines".
func count(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// decisionOf reads the form. Anything but an accepted, valid decision is
// a denial: decline and cancel are ordinary refusals, never a retry.
func decisionOf(r *mcp.ElicitationResponse) approval.Answer {
	if r == nil || r.Action != mcp.ElicitationResponseActionAccept {
		return approval.Deny
	}
	content, ok := r.Content.(map[string]any)
	if !ok {
		return approval.Deny
	}
	switch d, _ := content[decisionField].(string); approval.Answer(d) {
	case approval.AllowOnce:
		return approval.AllowOnce
	case approval.AllowSession:
		return approval.AllowSession
	}
	return approval.Deny
}

// inputRequired turns a pending question into the 2026-07-28 result that
// asks the client, with a signed, single-use state bound to this call.
func (s *Server) inputRequired(sess, tool string, args map[string]any, q tools.Question) *mcp.CallToolResult {
	state := s.states.issue(sess, tool, argsDigest(args), string(q.Target), string(q.Current), q.Effect.EncodePins(), s.cfg.ApprovalTimeout)
	return server.NewInputRequestBuilder(state).Elicit(decisionField, elicitationParams(q)).ToolResult()
}

// retryAnswer verifies a retry's requestState and reads the answer.
func (s *Server) retryAnswer(sess, tool string, req mcp.CallToolRequest, args map[string]any) (*answer, error) {
	st, err := s.states.redeem(req.Params.RequestState, sess, tool, argsDigest(args))
	if err != nil {
		return nil, err
	}
	var resp *mcp.ElicitationResult
	if req.Params.InputResponses != nil {
		resp = server.ElicitationResponse(req.Params.InputResponses, decisionField)
	}
	ans := &answer{target: sandbox.Mode(st.Target), current: sandbox.Mode(st.Current), decision: approval.Deny, pins: st.Pins}
	if resp != nil {
		ans.decision = decisionOf(&resp.ElicitationResponse)
	}
	return ans, nil
}

// DefaultApprovalTimeout denies a question nobody answers, when Config
// gives no ApprovalTimeout. The config key approval_timeout declares the
// same default without importing this package: a test in cmd/cordon keeps
// them equal.
const DefaultApprovalTimeout = defaults.ApprovalTimeout
