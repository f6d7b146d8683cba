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

// Qwen Code (@qwen-code/qwen-code) runs `qwen -p` against chatStandIn
// through its OpenAI-compatible base URL, with cordon as its only MCP
// server, started outside the workspace (its roots are its own directory).

func qwenCode(t *testing.T) string {
	return agentClient(t, "qwen", "0.24.4", "run npm ci in test/interop")
}

func qwenHome(t *testing.T, w *world, modelURL string) []string {
	dir := filepath.Join(w.home, ".qwen")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	settings := map[string]any{
		"mcpServers": map[string]any{"cordon": map[string]any{"command": cordonBin, "args": w.serveArgs(), "trust": true}},
		"security":   map[string]any{"auth": map[string]any{"selectedType": "openai"}, "folderTrust": map[string]any{"enabled": false}},
		"general":    map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":    map[string]any{"usageStatisticsEnabled": false},
		"telemetry":  map[string]any{"enabled": false},
	}
	b, err := json.Marshal(settings)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600))
	return agentEnv(w, "OPENAI_BASE_URL="+modelURL+"/v1", "OPENAI_API_KEY=dummy-key", "OPENAI_MODEL=qwen3-coder-plus", "NO_BROWSER=1")
}

func TestQwenCodeShowsTheModel(t *testing.T) {
	qwen := qwenCode(t)
	w := agentWorld(t)
	model := newChatStandIn(t, agentSteps(w))
	out, err := runAgent(t, w.outside, qwenHome(t, w, model.url), 180*time.Second, qwen,
		"-p", "Use the cordon tools.", "--approval-mode", "yolo", "--output-format", "text")
	require.NoError(t, err, "qwen -p: %s", out)
	received := model.received()
	checkAgentResults(t, "Qwen Code", w, received)
	// Qwen Code passes the text and the structuredContent: cordon leaves
	// the output out of the latter, so the model reads it once.
	require.Len(t, received, len(agentSteps(w)))
	assert.Equal(t, 1, strings.Count(received[2], "out-42"), "the output reaches the model once: %q", received[2])
	assert.Equal(t, 1, strings.Count(received[1], "+gamma"), "the diff reaches the model once: %q", received[1])
	checkRootsSetAside(t, "Qwen Code", w)
	checkInstructionsGiven(t, "Qwen Code", model.system(), received)
}
