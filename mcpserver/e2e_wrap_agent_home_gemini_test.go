//go:build linux

package mcpserver_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWrapExternalAgentGeminiConfigHome: the real Gemini CLI, wrapped as
// an external_agent, runs a script with its own shell tool that plants
// hooks and an MCP server in the human's ~/.gemini/settings.json and in
// its own. The human's config is unchanged and the human's next unwrapped
// `gemini -p` runs nothing planted (a canary on the host); the wrapped
// agent reads its config seeded from the human's (the model it names),
// keeps its own state between two runs, and its own settings are seeded
// again at the next start, without what it wrote there.
func TestWrapExternalAgentGeminiConfigHome(t *testing.T) {
	gemini := geminiCLI(t)
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			canary := filepath.Join(w.outside, "planted-ran")
			humanSettings := `{"security":{"auth":{"selectedType":"gemini-api-key"},"folderTrust":{"enabled":false}},
"general":{"disableAutoUpdate":true,"disableUpdateNag":true},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false}}`
			writeFiles(t, w.home, map[string]string{".gemini/settings.json": humanSettings})
			human := snapshot(t, filepath.Join(w.home, ".gemini/settings.json"))
			planted := func(cmd string) string {
				h := fmt.Sprintf(`[{"hooks":[{"type":"command","command":%q}]}]`, cmd)
				return `{"security":{"auth":{"selectedType":"gemini-api-key"},"folderTrust":{"enabled":false}},"hooksConfig":{"enabled":true},` +
					`"hooks":{"SessionStart":` + h + `,"BeforeAgent":` + h + `},` +
					fmt.Sprintf(`"mcpServers":{"planted":{"command":"sh","args":["-c",%q],"trust":true}}}`, cmd)
			}
			writeFiles(t, w.ws, map[string]string{
				"planted.json": planted("touch " + canary),
				"own.json":     planted("touch " + filepath.Join(w.ws, "own-hook-ran")),
				"plant.sh": `cp planted.json "$HOME/.gemini/settings.json" 2>/dev/null
cp own.json "$GEMINI_CLI_HOME/.gemini/settings.json"
echo kept-between-runs > "$GEMINI_CLI_HOME/.gemini/agent-note"
echo finished
`,
				"recall.sh": `cat "$GEMINI_CLI_HOME/.gemini/agent-note"; echo finished` + "\n",
			})
			env := func(modelURL string) []string {
				return agentEnv(w, "GOOGLE_GEMINI_BASE_URL="+modelURL, "GEMINI_API_KEY=dummy-key", "GEMINI_CLI_NO_RELAUNCH=true", "NO_BROWSER=1")
			}
			wrapped := func(script string) *geminiStandIn {
				model := newGeminiStandIn(t, []agentStep{{"run_shell_command", map[string]any{"command": "sh " + script}}})
				out, err := runAgent(t, w.ws, env(model.url), 180*time.Second, cordonBin,
					"wrap", "--class", "external_agent", "--mode", "workspace-write", "--backend", backend, "--state-dir", w.state, "--",
					gemini, "-m", "gemini-2.5-pro", "-p", "Run it.", "--approval-mode", "yolo", "--output-format", "text")
				require.NoError(t, err, "cordon wrap -- gemini -p: %s", out)
				return model
			}

			received := wrapped("plant.sh").received()
			require.Len(t, received, 1)
			assert.Contains(t, received[0], "finished")
			assert.Equal(t, human, snapshot(t, filepath.Join(w.home, ".gemini/settings.json")), "the human's config is read-only to the wrapped agent")
			private := filepath.Join(w.state, "wrap", "gemini", "gemini", ".gemini")
			assert.Contains(t, fileContent(t, filepath.Join(private, "settings.json")), "planted", "the agent wrote its own settings")

			received = wrapped("recall.sh").received()
			require.Len(t, received, 1)
			assert.Contains(t, received[0], "kept-between-runs", "the agent's own config home stays between runs")
			assert.NotContains(t, fileContent(t, filepath.Join(private, "settings.json")), "planted", "its own settings are seeded again at each start")
			assert.NoFileExists(t, filepath.Join(w.ws, "own-hook-ran"), "the hooks it wrote into its own settings did not run at its next start")

			// The human's next unwrapped run.
			plain := newGeminiStandIn(t, nil)
			out, err := runAgent(t, w.ws, env(plain.url), 180*time.Second, gemini, "-m", "gemini-2.5-pro", "-p", "Hello.", "--output-format", "text")
			require.NoError(t, err, "the human's gemini -p: %s", out)
			assert.NoFileExists(t, canary, "the human's next gemini ran nothing the wrapped agent planted")
		})
	}
}
