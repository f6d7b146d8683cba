//go:build linux

package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// brokenUserConfig puts an unknown key on line 2 of the cordon config the
// world's HOME holds, which every client's cordon reads, and returns the
// file and the model's one step: a command that must not run.
func brokenUserConfig(t *testing.T, w *world) (string, []agentStep, string) {
	t.Helper()
	cfg := filepath.Join(w.home, ".config", "cordon", "config.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o755))
	require.NoError(t, os.WriteFile(cfg, []byte("mode = \"workspace-write\"\nbogus_key = 1\n"), 0o644))
	canary := filepath.Join(w.ws, "ran")
	return cfg, []agentStep{{"bash", map[string]any{"command": "touch " + canary}}}, canary
}

// checkConfigErrorReceived: the model's first call returned cordon's
// message naming FILE:LINE and the fix, and nothing ran.
func checkConfigErrorReceived(t *testing.T, client, cfg, canary string, received []string) {
	t.Helper()
	require.NotEmpty(t, received, "%s: the model made its call", client)
	assert.Contains(t, received[0], "[sandbox: unavailable] cordon cannot run commands or touch files: "+cfg+":2: bogus_key: unknown key; remove it", client)
	assert.NoFileExists(t, canary, "%s: nothing ran", client)
}

// TestEveryClientSeesAConfigError: with a broken config, each agent CLI
// still connects to cordon (they used to show "Failed to connect" or
// "Disconnected"), and its model's first tool call returns the error,
// which is how the human learns of it. (Claude Code:
// TestClaudeCodeSeesAConfigError.)
func TestEveryClientSeesAConfigError(t *testing.T) {
	t.Run("Codex", func(t *testing.T) {
		codex := codexCLI(t)
		w := agentWorld(t)
		cfg, steps, canary := brokenUserConfig(t, w)
		model := newResponsesStandIn(t, steps)
		out, err := runAgent(t, w.ws, codexHome(t, w, model.url, "stdio"), 120*time.Second, codex,
			"exec", "--strict-config", "--skip-git-repo-check", "--ephemeral", "--json", "-C", w.ws, "Use the cordon tools.")
		require.NoError(t, err, "codex exec: %s", out)
		checkConfigErrorReceived(t, "Codex", cfg, canary, model.received())
	})
	t.Run("Gemini CLI", func(t *testing.T) {
		gemini := geminiCLI(t)
		w := agentWorld(t)
		cfg, steps, canary := brokenUserConfig(t, w)
		model := newGeminiStandIn(t, steps)
		env := geminiHome(t, w, model.url)
		// gemini mcp list writes its report to stderr.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		list := exec.CommandContext(ctx, gemini, "mcp", "list")
		list.Dir, list.Env = w.outside, append(slices.Clip(env), "PWD="+w.outside)
		raw, err := list.CombinedOutput()
		out := string(raw)
		require.NoError(t, err, "gemini mcp list: %s", out)
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "cordon") {
				line = l
			}
		}
		assert.Contains(t, line, "Connected", "gemini mcp list: %s", out)
		assert.NotContains(t, line, "Disconnected", "gemini mcp list: %s", out)
		out, err = runAgent(t, w.outside, env, 180*time.Second, gemini,
			"-m", "gemini-2.5-pro", "-p", "Use the cordon tools.", "--approval-mode", "yolo", "--output-format", "text")
		require.NoError(t, err, "gemini -p: %s", out)
		checkConfigErrorReceived(t, "Gemini CLI", cfg, canary, model.received())
	})
	t.Run("Qwen Code", func(t *testing.T) {
		qwen := qwenCode(t)
		w := agentWorld(t)
		cfg, steps, canary := brokenUserConfig(t, w)
		model := newChatStandIn(t, steps)
		out, err := runAgent(t, w.outside, qwenHome(t, w, model.url), 180*time.Second, qwen,
			"-p", "Use the cordon tools.", "--approval-mode", "yolo", "--output-format", "text")
		require.NoError(t, err, "qwen -p: %s", out)
		checkConfigErrorReceived(t, "Qwen Code", cfg, canary, model.received())
	})
	t.Run("opencode", func(t *testing.T) {
		opencode := opencodeCLI(t)
		w := agentWorld(t)
		cfg, steps, canary := brokenUserConfig(t, w)
		model := newChatStandIn(t, steps)
		out, err := runAgent(t, w.outside, opencodeHome(t, w, model.url), 180*time.Second, opencode,
			"run", "Use the cordon tools.")
		require.NoError(t, err, "opencode run: %s", out)
		checkConfigErrorReceived(t, "opencode", cfg, canary, model.received())
	})
}
