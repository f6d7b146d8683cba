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

// opencode (opencode-ai, whose npm package brings its native binary as an
// optional platform dependency put in place by its postinstall.mjs) runs
// `opencode run` against chatStandIn as an OpenAI-compatible provider,
// with cordon as its only MCP server, started outside the workspace (its
// roots are its own directory).

func opencodeCLI(t *testing.T) string {
	return agentClient(t, "opencode", "1.18.33",
		"run npm ci in test/interop, then node node_modules/opencode-ai/postinstall.mjs (npm ci --ignore-scripts leaves a placeholder binary)")
}

func opencodeHome(t *testing.T, w *world, modelURL string) []string {
	dir := filepath.Join(w.home, ".config", "opencode")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	config := map[string]any{
		"$schema":    "https://opencode.ai/config.json",
		"autoupdate": false,
		"share":      "disabled",
		"model":      "standin/standin-model",
		"provider": map[string]any{"standin": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "cordon test stand-in",
			"options": map[string]any{"baseURL": modelURL + "/v1", "apiKey": "dummy-key"},
			"models":  map[string]any{"standin-model": map[string]any{"name": "standin-model", "tool_call": true}},
		}},
		"mcp":        map[string]any{"cordon": map[string]any{"type": "local", "command": append([]string{cordonBin}, w.serveArgs()...), "enabled": true}},
		"permission": map[string]any{"edit": "allow", "bash": "allow", "webfetch": "deny"},
	}
	b, err := json.Marshal(config)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "opencode.json"), b, 0o600))
	return agentEnv(w, "XDG_CONFIG_HOME="+filepath.Join(w.home, ".config"), "XDG_DATA_HOME="+filepath.Join(w.home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(w.home, ".cache"), "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1")
}

func TestOpencodeShowsTheModel(t *testing.T) {
	opencode := opencodeCLI(t)
	w := agentWorld(t)
	model := newChatStandIn(t, agentSteps(w))
	out, err := runAgent(t, w.outside, opencodeHome(t, w, model.url), 180*time.Second, opencode,
		"run", "Use the cordon tools.")
	require.NoError(t, err, "opencode run: %s", out)
	checkAgentResults(t, "opencode", w, model.received())
	checkRootsSetAside(t, "opencode", w)
	shown := model.system()
	require.Contains(t, shown, "cordon: sandboxed", "opencode shows the model cordon's instructions (tools/clients.go says so)")
	checkInstructionsShown(t, "opencode", shown[strings.Index(shown, "cordon: sandboxed"):])
	for _, r := range model.received() {
		assert.NotContains(t, r, "cordon's instructions", "a client that shows the instructions does not get them twice")
	}
}
