//go:build linux

package mcpserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClaudeCodeSeesAConfigError: with an unknown key in cordon's config,
// Claude Code still lists cordon as connected (it used to show "Failed to
// connect"), and the model's first tool call returns the error naming
// FILE:LINE, which is how the human learns of it.
func TestClaudeCodeSeesAConfigError(t *testing.T) {
	claude := claudeCode(t)
	w := agentWorld(t)
	cfg := filepath.Join(w.base, "broken.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("mode = \"workspace-write\"\nbogus_key = 1\n"), 0o644))
	canary := filepath.Join(w.ws, "ran")
	model := newAnthropicStandIn(t, []agentStep{{"bash", map[string]any{"command": "touch " + canary}}})
	env := claudeEnv(w, model.url)

	server := map[string]any{"type": "stdio", "command": cordonBin, "args": w.serveArgs("--config", cfg)}
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"cordon": server}})
	require.NoError(t, err)
	mcpConfig := filepath.Join(w.base, "mcp-broken.json")
	require.NoError(t, os.WriteFile(mcpConfig, b, 0o600))

	add := append([]string{"mcp", "add", "--scope", "user", "cordon", "--", cordonBin}, w.serveArgs("--config", cfg)...)
	_, err = runAgent(t, w.ws, env, 30*time.Second, claude, add...)
	require.NoError(t, err)
	out, err := runAgent(t, w.ws, env, 60*time.Second, claude, "mcp", "list")
	require.NoError(t, err)
	listed := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "cordon: ") {
			listed = true
			assert.True(t, strings.HasSuffix(line, "✔ Connected"), "a broken config still connects: %q", line)
		}
	}
	assert.True(t, listed, out)

	out, err = runAgent(t, w.ws, env, 120*time.Second, claude,
		"-p", "Use the cordon tools.", "--mcp-config", mcpConfig, "--strict-mcp-config",
		"--allowedTools", "mcp__cordon", "--output-format", "json", "--no-session-persistence")
	require.NoError(t, err, "claude -p: %s", out)
	received := model.received()
	require.NotEmpty(t, received, "the model made its call")
	assert.Contains(t, received[0], "[sandbox: unavailable] cordon cannot run commands or touch files: "+cfg+":2: bogus_key: unknown key; remove it")
	assert.NoFileExists(t, canary, "nothing ran")
}
