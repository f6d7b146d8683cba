//go:build linux

package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientConfig: each client's fragment is what that client parses, and
// starts this cordon on the workspace given, spaces and quotes included.
func TestClientConfig(t *testing.T) {
	ws := filepath.Join(t.TempDir(), `my "proj" it's`)
	self, err := filepath.EvalSymlinks(cordonBin)
	require.NoError(t, err)
	want := []string{self, "serve", "--workspace", ws}
	one := func(name string) string {
		r := cordon(t, nil, t.TempDir(), "client-config", name, "--workspace", ws)
		require.Equal(t, 0, r.code, r.stderr)
		return r.stdout
	}
	var servers struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	for _, name := range []string{"gemini", "qwen", "claude-desktop", "cursor"} {
		require.NoError(t, json.Unmarshal([]byte(one(name)), &servers), name)
		s := servers.MCPServers["cordon"]
		assert.Equal(t, want, append([]string{s.Command}, s.Args...), name)
	}
	var vscode struct {
		Servers map[string]struct {
			Type, Command string
			Args          []string
		} `json:"servers"`
	}
	require.NoError(t, json.Unmarshal([]byte(one("vscode")), &vscode))
	assert.Equal(t, "stdio", vscode.Servers["cordon"].Type)
	assert.Equal(t, want, append([]string{vscode.Servers["cordon"].Command}, vscode.Servers["cordon"].Args...))
	var opencode struct {
		MCP map[string]struct {
			Type    string
			Command []string
			Enabled bool
		} `json:"mcp"`
	}
	require.NoError(t, json.Unmarshal([]byte(one("opencode")), &opencode))
	assert.Equal(t, "local", opencode.MCP["cordon"].Type)
	assert.Equal(t, want, opencode.MCP["cordon"].Command)
	var codex struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
		} `toml:"mcp_servers"`
	}
	_, err = toml.Decode(one("codex"), &codex)
	require.NoError(t, err)
	assert.Equal(t, want, append([]string{codex.MCPServers["cordon"].Command}, codex.MCPServers["cordon"].Args...))

	// The shell line: what a shell hands `claude mcp add` after "--".
	line := strings.TrimSpace(one("claude-code"))
	require.True(t, strings.HasPrefix(line, "claude mcp add cordon -- "), line)
	out, err := exec.Command("sh", "-c", "set -- "+strings.TrimPrefix(line, "claude mcp add cordon -- ")+`; printf '%s\n' "$@"`).Output()
	require.NoError(t, err)
	assert.Equal(t, strings.Join(want, "\n")+"\n", string(out))

	all := cordon(t, nil, t.TempDir(), "client-config")
	require.Equal(t, 0, all.code)
	for _, name := range clientNames() {
		assert.Contains(t, all.stdout, name+" (")
	}
	bad := cordon(t, nil, t.TempDir(), "client-config", "notepad")
	assert.Equal(t, exitUsage, bad.code)
	assert.Contains(t, bad.stderr, `unknown client "notepad": use one of claude-code, codex, gemini`)
}
