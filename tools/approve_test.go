package tools_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
	"github.com/cordonhq/cordon/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuestionTooLongToShowIsNotAsked: a question the dialog cannot show
// whole is refused with INVALID_ARGUMENT before anything happens: the
// human is never asked, the command never runs, the log holds no
// approval line. That holds for escalations and for the approval policy's
// own questions alike.
func TestQuestionTooLongToShowIsNotAsked(t *testing.T) {
	long := func(canary string) string {
		return "touch " + canary + "; : " + strings.Repeat("x", approval.MaxShownChars)
	}
	tall := func(canary string) string { return "touch " + canary + strings.Repeat("\n:", approval.MaxShownLines) }
	// Markers count as what they show: 1,000 interleaved ESC bytes show as
	// 6,000 characters.
	hidden := func(canary string) string { return "touch " + canary + "; : " + strings.Repeat("a\x1b", 1000) }
	cases := []struct {
		name   string
		policy approval.Policy
		mode   sandbox.Mode
		in     func(canary string) tools.BashInput
		want   string
	}{
		{"escalation, long line", approval.OnRequest, sandbox.ReadOnly, func(c string) tools.BashInput {
			return tools.BashInput{Command: long(c), Escalation: tools.Escalation{SandboxPermissions: "workspace-write", Justification: "it builds"}}
		}, "script file"},
		{"escalation, many lines", approval.OnRequest, sandbox.ReadOnly, func(c string) tools.BashInput {
			return tools.BashInput{Command: tall(c), Escalation: tools.Escalation{SandboxPermissions: "workspace-write", Justification: "it builds"}}
		}, "script file"},
		{"escalation, markers", approval.OnRequest, sandbox.ReadOnly, func(c string) tools.BashInput {
			return tools.BashInput{Command: hidden(c), Escalation: tools.Escalation{SandboxPermissions: "workspace-write", Justification: "it builds"}}
		}, "script file"},
		{"escalation, long justification", approval.OnRequest, sandbox.ReadOnly, func(c string) tools.BashInput {
			return tools.BashInput{Command: "touch " + c, Escalation: tools.Escalation{SandboxPermissions: "workspace-write",
				Justification: strings.Repeat("because ", approval.MaxJustificationChars/8+1)}}
		}, "one sentence"},
		{"approval policy always", approval.Always, sandbox.WorkspaceWrite, func(c string) tools.BashInput {
			return tools.BashInput{Command: long(c)}
		}, "script file"},
		{"approval policy ask-dangerous", approval.AskDangerous, sandbox.WorkspaceWrite, func(c string) tools.BashInput {
			return tools.BashInput{Command: "rm -rf nothing-here; " + long(c)}
		}, "script file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newFilesWorld(t, c.mode)
			cfg := w.tb.Config()
			cfg.Gate = approval.Gate{Policy: c.policy}
			tb := tools.New(cfg)
			dir := filepath.Join(w.base, "sessions")
			log, err := sessionlog.Create(dir, "s", sessionlog.StartInfo{Workspace: w.ws})
			require.NoError(t, err)
			t.Cleanup(func() { log.Close() })
			s := &tools.Session{ID: "s", Log: log, AllowSession: true}
			asked := 0
			call := tools.Call{Session: s, Asker: askerFunc(func(context.Context, tools.Question) (approval.Answer, error) {
				asked++
				return approval.AllowOnce, nil
			})}
			canary := filepath.Join(w.ws, "CANARY")
			before := snapshotTree(t, w.base)

			res, terr := tb.Bash(bg, call, c.in(canary))
			require.Nil(t, res)
			require.NotNil(t, terr)
			assert.Equal(t, tools.CodeInvalidArgument, terr.Code, terr.Message)
			assert.Contains(t, terr.Message, c.want)
			assert.False(t, terr.Denied, "nobody denied anything: the model can fix its arguments")
			assert.Zero(t, asked, "the human is never asked")
			assert.NoFileExists(t, canary)
			after := snapshotTree(t, w.base)
			for p := range after {
				if strings.HasPrefix(p, "sessions") {
					delete(after, p)
				}
			}
			assert.Equal(t, before, after, "nothing ran")
			events, err := sessionlog.Read(dir, "s")
			require.NoError(t, err)
			for _, e := range events {
				assert.NotContains(t, e.Type, "approval/", "no approval line is logged")
				assert.NotEqual(t, sessionlog.EventToolCall, e.Type, "the call never started")
			}
		})
	}
}

// TestQuestionShownWholeIsAsked: the padded command of the review (ls,
// 10,000 spaces, then the payload) is shown whole, so it is asked about,
// with every character of it in the question.
func TestQuestionShownWholeIsAsked(t *testing.T) {
	w := newFilesWorld(t, sandbox.ReadOnly)
	var got *tools.Question
	call := w.call
	call.Asker = askerFunc(func(_ context.Context, q tools.Question) (approval.Answer, error) {
		got = &q
		return approval.Deny, nil
	})
	canary := filepath.Join(w.ws, "CANARY")
	cmd := "ls" + strings.Repeat(" ", 10000) + "; touch " + canary
	_, terr := w.tb.Bash(bg, call, tools.BashInput{Command: cmd, Escalation: tools.Escalation{SandboxPermissions: "workspace-write", Justification: "listing"}})
	require.NotNil(t, terr)
	assert.Equal(t, tools.CodeEscalationDenied, terr.Code)
	require.NotNil(t, got)
	assert.Equal(t, cmd, got.Subject)
	assert.Equal(t, []string{"ls⟨10,000 spaces⟩; touch " + canary}, got.ShownSubject().Lines)
	assert.NoFileExists(t, canary)
}

func TestQuestionDisplayablePath(t *testing.T) {
	q := tools.Question{Tool: "write_file", Subject: "/ws/" + strings.Repeat("d/", approval.MaxShownChars/2)}
	require.Error(t, q.Displayable())
	assert.Contains(t, q.Displayable().Error(), "use a shorter path")
	q = tools.Question{Tool: "write_file", Subject: "/ws/a b/c\nd.txt"}
	assert.NoError(t, q.Displayable())
	assert.Equal(t, []string{"/ws/a b/c⟨LF⟩d.txt"}, q.ShownSubject().Lines, "a path is one line")
	assert.Equal(t, "Path", q.SubjectLabel())
	assert.Equal(t, "Input", tools.Question{Tool: "process_input"}.SubjectLabel())
	assert.Equal(t, "Command", tools.Question{Tool: "bash"}.SubjectLabel())
}

// TestIllegalEscalationIsNotAsked: a target that is not strictly wider
// than the session's mode (or is read-only, or no mode) is refused before
// anyone is asked, and a blank justification counts as none.
func TestIllegalEscalationIsNotAsked(t *testing.T) {
	cases := []struct {
		mode        sandbox.Mode
		target, why string
	}{
		{sandbox.WorkspaceWrite, "workspace-write", "x"},
		{sandbox.WorkspaceWrite, "read-only", "x"},
		{sandbox.ReadOnly, "root", "x"},
		{sandbox.ReadOnly, "workspace-write", "   "},
	}
	for _, c := range cases {
		w := newFilesWorld(t, c.mode)
		cfg := w.tb.Config()
		cfg.Gate = approval.Gate{Policy: approval.OnRequest}
		tb := tools.New(cfg)
		asked := 0
		call := tools.Call{Session: &tools.Session{ID: "s"}, Asker: askerFunc(func(context.Context, tools.Question) (approval.Answer, error) {
			asked++
			return approval.AllowOnce, nil
		})}
		canary := filepath.Join(w.ws, "CANARY")
		_, terr := tb.Bash(bg, call, tools.BashInput{Command: "touch " + canary, Escalation: tools.Escalation{SandboxPermissions: c.target, Justification: c.why}})
		require.NotNil(t, terr, "%+v", c)
		assert.Equal(t, tools.CodeInvalidArgument, terr.Code, "%+v: %s", c, terr.Message)
		assert.Zero(t, asked, "an illegal request must not reach the human: %+v", c)
		assert.NoFileExists(t, canary)
	}
}
