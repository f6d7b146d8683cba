//go:build linux

package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigErrorReachesTheClient: a configuration cordon cannot use (an
// unknown key, a wrong mode, bad TOML, a workspace that is not there)
// does not end the server before the handshake, where the human would see
// only "connection closed": the instructions' first line says cordon is
// not working and why, every tool call returns SANDBOX_UNAVAILABLE naming
// FILE:LINE and the fix, and nothing runs.
func TestConfigErrorReachesTheClient(t *testing.T) {
	cases := []struct {
		name, config, want string
		extra              []string
	}{
		{"unknown key", "mode = \"read-only\"\nbogus_key = 1\n", ":2: bogus_key: unknown key; remove it", nil},
		{"wrong mode", "mode = \"everything\"\n", ":1: mode", nil},
		{"bad TOML", "mode = \"read-only\n", ":1: ", nil},
		{"no workspace", "", "no such directory; create it or point --workspace at an existing one", []string{"--workspace", "/nonexistent/cordon-ws"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			cfg := filepath.Join(t.TempDir(), "config.toml")
			require.NoError(t, os.WriteFile(cfg, []byte(c.config), 0o644))
			canary := filepath.Join(w.ws, "ran")
			cs := w.stdio(t, clientOpts{version: "2025-11-25"}, append([]string{"--config", cfg}, c.extra...)...)
			first, _, _ := strings.Cut(cs.InitializeResult().Instructions, "\n")
			assert.True(t, strings.HasPrefix(first, "cordon is not working: "), first)
			assert.Contains(t, first, c.want)
			if c.extra == nil {
				assert.Contains(t, first, cfg+":", "the file is named")
			}
			tools, err := cs.ListTools(t.Context(), nil)
			require.NoError(t, err)
			assert.NotEmpty(t, tools.Tools, "the tools are listed, so the model calls one and reads why")
			for _, tool := range []struct {
				name string
				args map[string]any
			}{
				{"bash", map[string]any{"command": "touch " + canary}},
				{"write_file", map[string]any{"path": canary, "content": "x"}},
				{"sandbox_status", map[string]any{}},
			} {
				res := call(t, cs, tool.name, tool.args)
				assert.True(t, res.IsError, tool.name)
				assert.Contains(t, text(res), "[sandbox: unavailable] cordon cannot run commands or touch files: ", tool.name)
				assert.Contains(t, text(res), c.want, tool.name)
				assert.Equal(t, "SANDBOX_UNAVAILABLE", structured(t, res)["error"].(map[string]any)["code"], tool.name)
			}
			assert.NoFileExists(t, canary, "nothing ran")
		})
	}
}
