package mcpserver

import (
	"strings"
	"testing"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/stretchr/testify/assert"
)

// TestInstructionsLeadStandsAlone: a client that shows only the start of
// the instructions (Codex: the first line, cut at about 200 characters)
// still tells the model what cordon is, its mode, and how to ask for more.
func TestInstructionsLeadStandsAlone(t *testing.T) {
	ws := "/home/someone/projects/" + strings.Repeat("a-long-workspace-name/", 10)
	for _, mode := range []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite, sandbox.DangerFullAccess} {
		t.Run(string(mode), func(t *testing.T) {
			text := instructions(sandbox.Settings{Mode: mode, Workspace: ws})
			runes := []rune(text)
			lead := string(runes[:min(instructionsLead, len(runes))])
			assert.Contains(t, lead, "cordon")
			assert.Contains(t, lead, "Mode: "+string(mode)+".")
			assert.Contains(t, lead, "sandbox_permissions")
			assert.Contains(t, lead, "justification")
			first, rest, _ := strings.Cut(text, "\n")
			assert.LessOrEqual(t, len([]rune(first)), instructionsLead, "the first line is all that a deferred listing shows: %q", first)
			assert.NotContains(t, first, ws, "the workspace, of any length, comes after the lead")
			if mode == sandbox.WorkspaceWrite {
				assert.Contains(t, rest, ws)
			}
			assert.Contains(t, rest, "sandbox_status")
		})
	}
}
