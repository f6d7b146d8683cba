package approval

import (
	"fmt"
	"strings"

	"github.com/cordonhq/cordon/sandbox"
)

// Action is what happens to a tool call.
//
// The zero Action is Ask, so that a Decision that was never filled in asks
// the human rather than letting the call through.
type Action int

const (
	// Ask: the human must approve the call first (MCP elicitation).
	Ask Action = iota
	// Allow: the call proceeds, within the sandbox.
	Allow
	// Refuse: the call fails without anyone being asked. It is the answer
	// to an escalation request under Never; the tool layer reports it as
	// ESCALATION_NO_APPROVER, with how the human can widen the mode.
	Refuse
)

// String is the action's name for logs: "allow", "ask" or "refuse".
func (a Action) String() string {
	switch a {
	case Ask:
		return "ask"
	case Allow:
		return "allow"
	case Refuse:
		return "refuse"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// ShellTool is the name of the tool whose calls are shell commands, the
// calls the dangerous-command rules read. It is the one declaration of
// that name: the tool table's (tools.NameBash) is this.
const ShellTool = "bash"

// Call is what Decide needs to know about one tool call.
type Call struct {
	// Tool is the MCP tool name: bash, write_file, edit_file, read_file, ...
	Tool string
	// ReadOnly says the tool cannot write (the tool table declares it).
	// The zero value is a tool that can write, so that a tool nobody
	// declared read-only does not escape Always.
	ReadOnly bool
	// Command is the bash command line; empty for other tools.
	Command string
	// Escalate is the mode requested with sandbox_permissions; empty when
	// the call asks for no wider access. The tool layer has already checked
	// that it is strictly wider than the effective mode.
	Escalate sandbox.Mode
}

// Decision is the verdict on one tool call.
type Decision struct {
	Action Action
	// Reason explains the action, for the human (Ask: the question's
	// context, e.g. "dangerous command: rm -rf x (recursive delete)";
	// Refuse: why nobody is asked) and for the session log.
	Reason string
	// Findings are the dangerous parts of a bash command, when the
	// classifier ran and found any.
	Findings []Finding
}

// Gate is the approval gate of a deployment: its policy and its dangerous
// list.
type Gate struct {
	Policy Policy
	// Rules are the dangerous-command rules; nil means DefaultRules. Use an
	// empty non-nil Rules to keep only the built-in checks.
	Rules Rules
}

// Decide is Gate{Policy: p}.Decide(call): the policy with the default
// rules.
func (p Policy) Decide(call Call) Decision { return Gate{Policy: p}.Decide(call) }

// Decide says whether call may run, following the SPEC's table:
//
//   - Never never asks: every call is allowed, an escalation request is
//     refused.
//   - OnRequest asks only for escalation requests.
//   - AskDangerous asks for escalation requests and for bash commands that
//     the classifier finds dangerous.
//   - Always asks for escalation requests and for every call of a tool that
//     can write (bash, write_file, edit_file, and any tool whose call is
//     not marked ReadOnly).
//
// An invalid policy is treated as Always. When several things call for
// asking, the reason names them all.
func (g Gate) Decide(call Call) Decision {
	policy, note := g.Policy, ""
	if !policy.Valid() {
		note = fmt.Sprintf("unknown approval policy %q is treated as %q", policy, Always)
		policy = Always
	}
	escalation := call.Escalate != ""

	if policy == Never {
		if escalation {
			return Decision{
				Action: Refuse,
				Reason: fmt.Sprintf("escalation to %s refused: approval policy %q has nobody to ask", call.Escalate, Never),
			}
		}
		return Decision{Action: Allow, Reason: fmt.Sprintf("approval policy %q never asks", Never)}
	}

	var reasons []string
	if escalation {
		reasons = append(reasons, fmt.Sprintf("escalation to %s requested", call.Escalate))
	}
	if policy == Always && !call.ReadOnly {
		reasons = append(reasons, fmt.Sprintf("approval policy %q asks before every call that can write", Always))
	}
	var findings []Finding
	if (policy == AskDangerous || policy == Always) && call.Tool == ShellTool {
		rules := g.Rules
		if rules == nil {
			rules = defaultRules
		}
		v := rules.Classify(call.Command)
		if v.Dangerous() {
			findings = v.Findings
			reasons = append(reasons, v.Summary())
		}
	}

	if len(reasons) == 0 {
		return Decision{Action: Allow, Reason: allowReason(policy, call)}
	}
	if note != "" {
		reasons = append([]string{note}, reasons...)
	}
	return Decision{Action: Ask, Reason: strings.Join(reasons, "; "), Findings: findings}
}

// allowReason says why nothing called for asking, for the session log.
func allowReason(policy Policy, call Call) string {
	switch {
	case policy == OnRequest:
		return fmt.Sprintf("approval policy %q asks only for escalation requests", OnRequest)
	case policy == AskDangerous && call.Tool == ShellTool:
		return "command not classified dangerous"
	case policy == AskDangerous:
		return fmt.Sprintf("approval policy %q asks only for escalations and dangerous commands", AskDangerous)
	}
	return fmt.Sprintf("tool %s cannot write", call.Tool)
}
