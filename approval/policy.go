package approval

import (
	"fmt"
	"slices"
	"strings"
)

// Policy says when the human is asked before a tool call runs.
//
// The zero Policy is not valid; Decide treats any invalid policy as Always,
// so that a value lost on the way from the config asks more, never less.
type Policy string

// The approval policies, from the one that asks least to the one that asks
// most.
const (
	// Never asks: calls run within the sandbox, and escalation requests are
	// refused, because there is nobody to approve them
	// (ESCALATION_NO_APPROVER).
	Never Policy = "never"
	// OnRequest asks only when the model requests wider access.
	OnRequest Policy = "on-request"
	// AskDangerous asks for escalation requests and before any bash command
	// that Classify finds dangerous.
	AskDangerous Policy = "ask-dangerous"
	// Always asks before every call that can write (bash, write_file,
	// edit_file), whatever its arguments.
	Always Policy = "always"
)

// Policies lists every policy, from the one that asks least to the one that
// asks most.
var Policies = []Policy{Never, OnRequest, AskDangerous, Always}

// ParsePolicy accepts exactly the names of the policies.
func ParsePolicy(s string) (Policy, error) {
	if p := Policy(s); p.Valid() {
		return p, nil
	}
	return "", fmt.Errorf("unknown approval policy %q: use one of %s", s, policyNames())
}

func policyNames() string {
	names := make([]string, len(Policies))
	for i, p := range Policies {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

// Valid reports whether p is one of the four policies.
func (p Policy) Valid() bool { return p.rank() >= 0 }

// rank orders policies by how often they ask; -1 for an unknown policy.
func (p Policy) rank() int { return slices.Index(Policies, p) }

// StricterThan reports whether p asks the human in strictly more situations
// than other. A configuration layer that may only tighten (the workspace's
// cordon.toml) can use it to drop a policy that would ask less.
func (p Policy) StricterThan(other Policy) bool {
	return p.Valid() && other.Valid() && p.rank() > other.rank()
}

// String is the policy's name, as the config and flags spell it.
func (p Policy) String() string { return string(p) }
