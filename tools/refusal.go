package tools

import (
	"errors"
	"fmt"

	"github.com/cordonhq/cordon/sandbox"
)

// refusedPolicy is the error of a call that would run a command or write a
// file under a policy that no backend may confine (a writable root holds
// the home directory), or nil. The human fixes it, not the model: the
// message says how, and escalating cannot help.
func refusedPolicy(pol sandbox.ExecutionPolicy) *ToolError {
	err := pol.Refusal()
	if err == nil {
		return nil
	}
	reason := err.Error()
	var ue *sandbox.UnavailableError
	if errors.As(err, &ue) {
		reason = ue.Reason
	}
	return &ToolError{Code: CodeUnavailable, Denied: true, Message: fmt.Sprintf(
		"%s\nsandbox unavailable: %s\nNothing ran and nothing was written. The human fixes this by starting the agent (or cordon) in a project directory.",
		DenialMarker(pol.Mode), reason)}
}
