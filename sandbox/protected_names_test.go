package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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

const (
	tableBegin = "<!-- protected-names: generated from sandbox/protected_names.txt (TestReadmeHasTheProtectedNames; CORDON_UPDATE_README=1 rewrites it) -->"
	tableEnd   = "<!-- /protected-names -->"
)

// protectedNamesTable is the README's table of the list: one row a tool,
// in the order the tools first appear.
func protectedNamesTable() string {
	var tools []string
	names := map[string][]string{}
	for _, e := range ProtectedNameList {
		if !slices.Contains(tools, e.Tool) {
			tools = append(tools, e.Tool)
		}
		names[e.Tool] = append(names[e.Tool], "`"+e.Name+"`")
	}
	var b strings.Builder
	b.WriteString("| tool | protected names |\n| --- | --- |\n")
	for _, tool := range tools {
		b.WriteString("| " + tool + " | " + strings.Join(names[tool], ", ") + " |\n")
	}
	return b.String()
}

// TestReadmeHasTheProtectedNames: the README's table is the list's.
func TestReadmeHasTheProtectedNames(t *testing.T) {
	readme := filepath.Join("..", "README.md")
	data, err := os.ReadFile(readme)
	require.NoError(t, err)
	s := string(data)
	i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd)
	require.True(t, i >= 0 && j > i, "README.md lacks the markers %q and %q", tableBegin, tableEnd)
	want := tableBegin + "\n" + protectedNamesTable() + tableEnd
	if os.Getenv("CORDON_UPDATE_README") == "1" {
		s = s[:i] + want + s[j+len(tableEnd):]
		require.NoError(t, os.WriteFile(readme, []byte(s), 0o644))
		return
	}
	assert.Equal(t, want, s[i:j+len(tableEnd)], "README.md's protected-name table differs from protected_names.txt: run CORDON_UPDATE_README=1 go test -run TestReadmeHasTheProtectedNames ./sandbox")
}
