package tools

import (
	"testing"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/stretchr/testify/assert"
)

func TestDenialMarkerAndHint(t *testing.T) {
	assert.Equal(t, "[sandbox: file access denied under read-only mode]", DenialMarker(sandbox.ReadOnly))
	assert.Equal(t, "[sandbox: file access denied under workspace-write mode]", DenialMarker(sandbox.WorkspaceWrite))
	assert.Equal(t, `[sandbox: to retry with wider access, call bash again with sandbox_permissions="workspace-write" and a one-sentence justification]`,
		EscalationHint("bash", sandbox.ReadOnly))
	assert.Equal(t, `[sandbox: to retry with wider access, call write_file again with sandbox_permissions="danger-full-access" and a one-sentence justification]`,
		EscalationHint("write_file", sandbox.WorkspaceWrite))
	assert.Equal(t, "[sandbox: escalation to workspace-write was not approved]", NotApprovedLine(sandbox.WorkspaceWrite))
}
