package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// EscalationRequest is a model's request for wider access on one call.
type EscalationRequest struct {
	Tool          string
	Subject       string // the command or path, shown to the human
	Current       Mode
	Target        Mode
	Justification string
}

// Decision is the human's answer to an escalation request.
type Decision string

// The answers a human can give.
const (
	AllowOnce    Decision = "allow_once"
	AllowSession Decision = "allow_session"
	Deny         Decision = "deny"
)

// EscalationApprover asks the human. Implementations live outside this
// package (MCP elicitation); the sandbox only knows it must ask someone.
type EscalationApprover interface {
	ApproveEscalation(ctx context.Context, req EscalationRequest) (Decision, error)
}

// Errors of the escalation ladder.
var (
	ErrEscalationNoApprover = errors.New("no approver can be asked for wider access")
	ErrEscalationInvalid    = errors.New("invalid escalation request")
)

// ParseEscalation validates the paired arguments sandbox_permissions and
// justification. Both empty means "no escalation" (zero Mode, nil error).
func ParseEscalation(permissions, justification string) (Mode, string, error) {
	justification = strings.TrimSpace(justification)
	switch {
	case permissions == "" && justification == "":
		return "", "", nil
	case permissions == "":
		return "", "", fmt.Errorf("%w: justification given without sandbox_permissions; pass both or neither", ErrEscalationInvalid)
	case justification == "":
		return "", "", fmt.Errorf("%w: sandbox_permissions given without a non-empty justification; pass both or neither", ErrEscalationInvalid)
	}
	target, err := ParseMode(permissions)
	if err != nil {
		return "", "", fmt.Errorf("%w: sandbox_permissions: %v", ErrEscalationInvalid, err)
	}
	return target, justification, nil
}

// CanEscalateTo reports whether target is a legal escalation from current:
// strictly wider, and never read-only.
func CanEscalateTo(current, target Mode) error {
	if target == ReadOnly {
		return fmt.Errorf("%w: read-only is never an escalation target", ErrEscalationInvalid)
	}
	if !target.Valid() {
		return fmt.Errorf("%w: unknown target mode %q", ErrEscalationInvalid, target)
	}
	if !target.WiderThan(current) {
		return fmt.Errorf("%w: %s is not wider than the current mode %s", ErrEscalationInvalid, target, current)
	}
	return nil
}

// ApproveEscalation checks the request and, only when it is legal, asks the
// approver. Illegal requests are refused before anyone is asked; with no
// approver the answer is ErrEscalationNoApprover, never a silent grant.
func ApproveEscalation(ctx context.Context, approver EscalationApprover, req EscalationRequest) (Decision, error) {
	if err := CanEscalateTo(req.Current, req.Target); err != nil {
		return Deny, err
	}
	if strings.TrimSpace(req.Justification) == "" {
		return Deny, fmt.Errorf("%w: empty justification", ErrEscalationInvalid)
	}
	if approver == nil {
		return Deny, ErrEscalationNoApprover
	}
	d, err := approver.ApproveEscalation(ctx, req)
	if err != nil {
		return Deny, err
	}
	switch d {
	case AllowOnce, AllowSession, Deny:
		return d, nil
	}
	return Deny, fmt.Errorf("approver returned unknown decision %q", d)
}
