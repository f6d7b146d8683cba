package tools

import (
	"fmt"

	"github.com/cordonhq/cordon/sandbox"
)

// DenialMarker is the first line of every response to a call that the
// sandbox or the FS fence stopped, the same for shell and file tools, so a
// model (and a human reading a transcript) can recognise it.
func DenialMarker(m sandbox.Mode) string {
	return fmt.Sprintf("[sandbox: file access denied under %s mode]", m)
}

// EscalationHint tells the model how to ask for more: a retry of the same
// tool with the escalation arguments. It names the next wider mode.
func EscalationHint(tool string, current sandbox.Mode) string {
	target := sandbox.WorkspaceWrite
	if current == sandbox.WorkspaceWrite {
		target = sandbox.DangerFullAccess
	}
	return fmt.Sprintf("[sandbox: to retry with wider access, call %s again with sandbox_permissions=%q and a one-sentence justification]", tool, target)
}

// NotApprovedLine is appended to a denial when an escalation was refused.
func NotApprovedLine(target sandbox.Mode) string {
	return fmt.Sprintf("[sandbox: escalation to %s was not approved]", target)
}

// Error codes, as they appear in structuredContent.error.code.
const (
	CodeUnavailable      = "SANDBOX_UNAVAILABLE"
	CodeDenied           = "SANDBOX_DENIED"
	CodeRunnerFailed     = "RUNNER_FAILED"
	CodeNoApprover       = "ESCALATION_NO_APPROVER"
	CodeEscalationDenied = "ESCALATION_DENIED"
	CodeInvalidArgument  = "INVALID_ARGUMENT"
	CodeNotFound         = "NOT_FOUND"
	CodeBinaryFile       = "BINARY_FILE"
	CodeTooLarge         = "TOO_LARGE"
	CodeTimeout          = "TIMEOUT"
)
