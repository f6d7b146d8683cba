package sandbox

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProtectedNamesData: the list parses, every entry names its tool,
// and it holds every name the contract lists.
func TestProtectedNamesData(t *testing.T) {
	require.NotEmpty(t, ProtectedNameList)
	for _, e := range ProtectedNameList {
		assert.NotEmpty(t, e.Tool, e.Name)
	}
	for _, want := range []string{
		".cordon", ".bashrc", ".bash_aliases", ".bashrc.d", ".bash_profile", ".profile", ".zshrc", ".zprofile", ".zshenv",
		".vscode", ".idea", ".mcp.json", ".claude", ".cursor", ".codex", ".gemini", ".envrc", ".ripgreprc",
		"opencode.json", "opencode.jsonc", ".opencode", ".aider.conf.yml", ".continue", ".roo", ".roomodes", ".kilocode",
		".kiro", ".amazonq", ".windsurf", ".zed", ".helix", ".devcontainer", "mise.toml", ".mise.toml", ".mise",
		".hg/hgrc", ".jj/repo/config.toml",
	} {
		assert.Contains(t, DefaultProtectedNames, want)
	}
}

// TestProtectedNamesOneLine: adding a tool is one line of data, with or
// without a tab; malformed lines are refused, not skipped.
func TestProtectedNamesOneLine(t *testing.T) {
	list, err := parseProtectedNames(protectedNamesData + ".newtool\tNew Tool\nnewtool.yml   New Tool\n")
	require.NoError(t, err)
	assert.Equal(t, ProtectedName{".newtool", "New Tool"}, list[len(list)-2])
	assert.Equal(t, ProtectedName{"newtool.yml", "New Tool"}, list[len(list)-1])
	for _, bad := range []string{".x\n", "/abs Tool\n", "../up Tool\n", "a/../b Tool\n", ".vscode VS Code again\n"} {
		_, err := parseProtectedNames(protectedNamesData + bad)
		assert.Error(t, err, bad)
	}
}
