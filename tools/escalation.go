package tools

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cordonhq/cordon/sandbox"
)

// errEscalationInvalid is wrapped by every refusal of the ladder.
var errEscalationInvalid = errors.New("invalid escalation request")

// parseEscalation validates the paired arguments sandbox_permissions and
// justification. Both empty means "no escalation" (zero sandbox.Mode, nil error).
func parseEscalation(permissions, justification string) (sandbox.Mode, string, error) {
	justification = strings.TrimSpace(justification)
	switch {
	case permissions == "" && justification == "":
		return "", "", nil
	case permissions == "":
		return "", "", fmt.Errorf("%w: justification given without sandbox_permissions; pass both or neither", errEscalationInvalid)
	case justification == "":
		return "", "", fmt.Errorf("%w: sandbox_permissions given without a non-empty justification; pass both or neither", errEscalationInvalid)
	}
	target, err := sandbox.ParseMode(permissions)
	if err != nil {
		return "", "", fmt.Errorf("%w: sandbox_permissions: %v", errEscalationInvalid, err)
	}
	return target, justification, nil
}

// canEscalateTo reports whether target is a legal escalation from current:
// strictly wider, and never read-only.
func canEscalateTo(current, target sandbox.Mode) error {
	if target == sandbox.ReadOnly {
		return fmt.Errorf("%w: read-only is never an escalation target", errEscalationInvalid)
	}
	if !target.Valid() {
		return fmt.Errorf("%w: unknown target mode %q", errEscalationInvalid, target)
	}
	if !target.WiderThan(current) {
		return fmt.Errorf("%w: %s is not wider than the current mode %s", errEscalationInvalid, target, current)
	}
	return nil
}
