package approval

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cordonhq/cordon/sandbox"
)

func TestDecide(t *testing.T) {
	const (
		harmless  = "go test ./..."
		dangerous = "rm -rf build"
	)
	bash := func(cmd string) Call { return Call{Tool: "bash", Command: cmd} }
	escalate := func(c Call) Call { c.Escalate = sandbox.WorkspaceWrite; return c }
	write := Call{Tool: "write_file"}
	edit := Call{Tool: "edit_file"}
	read := Call{Tool: "read_file", ReadOnly: true}

	tests := []struct {
		name   string
		policy Policy
		call   Call
		want   Action
		reason string // a substring of the reason
	}{
		{"never: harmless bash", Never, bash(harmless), Allow, "never asks"},
		{"never: dangerous bash", Never, bash(dangerous), Allow, "never asks"},
		{"never: write", Never, write, Allow, ""},
		{"never: escalation refused", Never, escalate(bash(harmless)), Refuse, "escalation to workspace-write refused"},
		{"never: escalation of a write refused", Never, escalate(write), Refuse, ""},

		{"on-request: harmless bash", OnRequest, bash(harmless), Allow, "only for escalation"},
		{"on-request: dangerous bash", OnRequest, bash(dangerous), Allow, ""},
		{"on-request: write", OnRequest, write, Allow, ""},
		{"on-request: escalation", OnRequest, escalate(bash(harmless)), Ask, "escalation to workspace-write requested"},

		{"ask-dangerous: harmless bash", AskDangerous, bash(harmless), Allow, "not classified dangerous"},
		{"ask-dangerous: dangerous bash", AskDangerous, bash(dangerous), Ask, "dangerous command: rm -rf build (recursive delete)"},
		{"ask-dangerous: unparsable bash", AskDangerous, bash("echo 'x"), Ask, "could not parse"},
		{"ask-dangerous: write", AskDangerous, write, Allow, ""},
		{"ask-dangerous: edit", AskDangerous, edit, Allow, ""},
		{"ask-dangerous: escalation", AskDangerous, escalate(bash(harmless)), Ask, "escalation to workspace-write requested"},
		{"ask-dangerous: escalation and danger", AskDangerous, escalate(bash(dangerous)), Ask,
			"escalation to workspace-write requested; dangerous command: rm -rf build (recursive delete)"},

		{"always: harmless bash", Always, bash(harmless), Ask, "every call that can write"},
		{"always: dangerous bash names the danger", Always, bash(dangerous), Ask, "recursive delete"},
		{"always: write", Always, write, Ask, "every call that can write"},
		{"always: edit", Always, edit, Ask, ""},
		{"always: read", Always, read, Allow, "cannot write"},
		{"always: grep", Always, Call{Tool: "grep", ReadOnly: true}, Allow, ""},
		{"always: unknown tool can write", Always, Call{Tool: "new_tool"}, Ask, ""},
		{"always: escalation", Always, escalate(write), Ask, "escalation to workspace-write requested"},

		{"invalid policy acts as always", Policy(""), write, Ask, `unknown approval policy "" is treated as "always"`},
		{"invalid policy still allows reads", Policy("bogus"), read, Allow, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.policy.Decide(tt.call)
			assert.Equal(t, tt.want, d.Action, d.Reason)
			assert.Contains(t, d.Reason, tt.reason)
			assert.NotEmpty(t, d.Reason)
		})
	}
}

func TestDecideFindings(t *testing.T) {
	d := AskDangerous.Decide(Call{Tool: "bash", Command: "ls; git push"})
	assert.Equal(t, Ask, d.Action)
	assert.Equal(t, []Finding{{Command: "git push", Reason: "pushes to a remote"}}, d.Findings)

	d = AskDangerous.Decide(Call{Tool: "bash", Command: "ls"})
	assert.Empty(t, d.Findings)
}

func TestGateRules(t *testing.T) {
	extra, err := ParseRule("terraform destroy # destroys infrastructure")
	assert.NoError(t, err)
	g := Gate{Policy: AskDangerous, Rules: append(DefaultRules(), extra)}

	d := g.Decide(Call{Tool: "bash", Command: "terraform destroy"})
	assert.Equal(t, Ask, d.Action)
	assert.Equal(t, "dangerous command: terraform destroy (destroys infrastructure)", d.Reason)

	assert.Equal(t, Ask, g.Decide(Call{Tool: "bash", Command: "rm -rf x"}).Action, "defaults still apply")
	assert.Equal(t, Allow, Gate{Policy: AskDangerous, Rules: Rules{}}.Decide(Call{Tool: "bash", Command: "rm -rf x"}).Action)
}

func TestZeroDecisionAsks(t *testing.T) {
	assert.Equal(t, Ask, Decision{}.Action)
	assert.Equal(t, "ask", Ask.String())
	assert.Equal(t, "allow", Allow.String())
	assert.Equal(t, "refuse", Refuse.String())
	assert.Equal(t, "Action(7)", Action(7).String())
}
