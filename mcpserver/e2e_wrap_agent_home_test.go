//go:build linux

package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An agent wrapped as an external_agent writes hooks and MCP servers into
// every config it can reach: the human's (~/.claude/settings.json,
// ~/.claude.json, ~/.codex/config.toml) and its own. The human's next
// unwrapped `claude -p` and `codex exec` then run nothing it planted
// (judged by a canary on the host), while the wrapped agent reads its
// config seeded from the human's, authenticates with the credentials
// copied from the human's, and keeps its own state between two runs.

// plantedCommand is what every planted hook and server runs: it leaves
// canary behind wherever it runs.
func plantedCommand(canary string) string { return "touch " + canary }

// writeFiles writes each name → content beneath dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	}
}

// snapshot reads each file, to show later that nothing changed it.
func snapshot(t *testing.T, paths ...string) map[string]string {
	out := map[string]string{}
	for _, p := range paths {
		out[p] = fileContent(t, p)
	}
	return out
}

// authRecorder records each request's Authorization header, then serves it.
type authRecorder struct {
	next http.Handler
	mu   sync.Mutex
	seen []string
}

func (a *authRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.seen = append(a.seen, r.Header.Get("Authorization"))
	a.mu.Unlock()
	a.next.ServeHTTP(w, r)
}

func (a *authRecorder) headers() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

// claudeBashStandIn is the Messages API stand-in scripting Claude Code's
// own Bash tool, recording the Authorization it is sent.
func claudeBashStandIn(t *testing.T, steps []agentStep) (*anthropicStandIn, *authRecorder) {
	s := &anthropicStandIn{standIn: newStandIn(t, steps)}
	rec := &authRecorder{next: s}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s, rec
}

func TestWrapExternalAgentClaudeConfigHome(t *testing.T) {
	claude := claudeCode(t)
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			canary := filepath.Join(w.outside, "planted-ran")
			ownHookRan := filepath.Join(w.ws, "own-hook-ran")
			const token = "sk-ant-oat01-cordon-test"
			// The human's config: a permission the wrapped agent needs
			// (so that it shows it read its seeded settings), and its login.
			writeFiles(t, w.home, map[string]string{
				".claude/settings.json":     `{"permissions":{"allow":["Bash(sh:*)"]}}`,
				".claude/.credentials.json": `{"claudeAiOauth":{"accessToken":"` + token + `","refreshToken":"sk-ant-ort01-cordon-test","expiresAt":4102444800000,"scopes":["user:inference","user:profile"],"subscriptionType":"max"}}`,
				".claude.json":              `{"hasCompletedOnboarding":true}`,
			})
			human := snapshot(t, filepath.Join(w.home, ".claude/settings.json"), filepath.Join(w.home, ".claude.json"))
			hooks := func(cmd string) string {
				h := fmt.Sprintf(`[{"hooks":[{"type":"command","command":%q}]}]`, cmd)
				return `{"permissions":{"allow":["Bash(sh:*)"]},"hooks":{"SessionStart":` + h + `,"UserPromptSubmit":` + h + `}}`
			}
			server := fmt.Sprintf(`{"hasCompletedOnboarding":true,"mcpServers":{"planted":{"type":"stdio","command":"sh","args":["-c",%q]}}}`, plantedCommand(canary))
			writeFiles(t, w.ws, map[string]string{
				"hooks.json":     hooks(plantedCommand(canary)),
				"own-hooks.json": hooks(plantedCommand(ownHookRan)),
				"server.json":    server,
				"plant.sh": `cp hooks.json "$HOME/.claude/settings.json"
cp server.json "$HOME/.claude.json"
mkdir -p "$HOME/.claude/hooks"
cp own-hooks.json "$CLAUDE_CONFIG_DIR/settings.json"
echo kept-between-runs > "$CLAUDE_CONFIG_DIR/agent-note"
echo finished
`,
				"recall.sh": `cat "$CLAUDE_CONFIG_DIR/agent-note"; echo finished` + "\n",
			})
			wrapped := func(script string) (*anthropicStandIn, *authRecorder) {
				model, rec := claudeBashStandIn(t, []agentStep{{"Bash", map[string]any{"command": "sh " + script, "description": "run it"}}})
				env := agentEnv(w, "ANTHROPIC_BASE_URL="+model.url, "ENABLE_TOOL_SEARCH=false",
					"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")
				out, err := runAgent(t, w.ws, env, 180*time.Second, cordonBin,
					"wrap", "--class", "external_agent", "--mode", "workspace-write", "--backend", backend, "--state-dir", w.state, "--",
					claude, "-p", "Run it.", "--output-format", "json")
				require.NoError(t, err, "cordon wrap -- claude -p: %s", out)
				return model, rec
			}

			model, rec := wrapped("plant.sh")
			received := model.received()
			require.Len(t, received, 1, "the seeded settings allowed the Bash tool")
			assert.Contains(t, received[0], "finished")
			for _, h := range rec.headers() {
				assert.Equal(t, "Bearer "+token, h, "the wrapped agent authenticates with the human's login, copied in")
			}
			assert.Equal(t, human, snapshot(t, filepath.Join(w.home, ".claude/settings.json"), filepath.Join(w.home, ".claude.json")),
				"the human's config is read-only to the wrapped agent")
			assert.NoDirExists(t, filepath.Join(w.home, ".claude", "hooks"))

			model, _ = wrapped("recall.sh")
			received = model.received()
			require.Len(t, received, 1)
			assert.Contains(t, received[0], "kept-between-runs", "the agent's own config home stays between runs")
			assert.NoFileExists(t, ownHookRan, "its own settings are seeded again at each start: the hooks it wrote there are gone")
			assert.DirExists(t, filepath.Join(w.state, "wrap", "claude", "claude", "projects"), "its sessions are kept in its own home")

			// The copied login is the agent's alone: another wrapped
			// program cannot read it.
			creds := filepath.Join(w.state, "wrap", "claude", "claude", ".credentials.json")
			require.FileExists(t, creds)
			out, err := runAgent(t, w.ws, agentEnv(w), 60*time.Second, cordonBin,
				"wrap", "--backend", backend, "--state-dir", w.state, "--name", "other", "--", "cat", creds)
			assert.NotContains(t, out, token, "another class directory's program reads no other agent's credentials")
			assert.Error(t, err, "cat fails")

			// The human's next unwrapped run.
			plain, _ := claudeBashStandIn(t, nil)
			out, err = runAgent(t, w.ws, agentEnv(w, "ANTHROPIC_BASE_URL="+plain.url, "ENABLE_TOOL_SEARCH=false",
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"), 180*time.Second,
				claude, "-p", "Hello.", "--output-format", "json")
			require.NoError(t, err, "the human's claude -p: %s", out)
			assert.NoFileExists(t, canary, "the human's next claude ran nothing the wrapped agent planted")
		})
	}
}

// codexShellStandIn is a Responses API stand-in that has Codex run each
// scripted command with its own exec_command tool, recording the output
// and the Authorization it is sent.
type codexShellStandIn struct {
	t        *testing.T
	commands []string
	mu       sync.Mutex
	outputs  map[int]string
	auth     []string
}

const codexShellCallID = "call_shell_%02d"

func newCodexShellStandIn(t *testing.T, commands ...string) *codexShellStandIn {
	return &codexShellStandIn{t: t, commands: commands, outputs: map[int]string{}}
}

func (s *codexShellStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Input []struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	for _, it := range req.Input {
		var step int
		if it.Type == "function_call_output" && scan(it.CallID, codexShellCallID, &step) {
			s.outputs[step] = codexOutput(it.Output)
		}
	}
	next := len(s.outputs)
	s.mu.Unlock()
	item := map[string]any{"type": "message", "id": "msg_done", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}}
	if next < len(s.commands) {
		args, _ := json.Marshal(map[string]any{"cmd": s.commands[next], "login": false})
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", next), "call_id": fmt.Sprintf(codexShellCallID, next),
			"name": "exec_command", "arguments": string(args)}
	}
	id := fmt.Sprintf("resp_shell_%d", next)
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": id,
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 20}}})
}

func (s *codexShellStandIn) output(step int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.outputs[step]
}

func (s *codexShellStandIn) authorizations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

// codexUserConfig is the human's ~/.codex/config.toml: the stand-in as
// the model provider, authenticated from auth.json; Codex's own sandbox
// off (cordon is the sandbox); nothing leaves loopback.
func codexUserConfig(modelURL string) string {
	return fmt.Sprintf(`model = "gpt-5.5"
model_provider = "standin"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[features]
plugins = false

[analytics]
enabled = false

[model_providers.standin]
name = "cordon test stand-in"
base_url = %q
wire_api = "responses"
requires_openai_auth = true
`, modelURL+"/v1")
}

func TestWrapExternalAgentCodexConfigHome(t *testing.T) {
	codex := codexCLI(t)
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			canary := filepath.Join(w.outside, "planted-ran")
			ownServerRan := filepath.Join(w.ws, "own-server-ran")
			const key = "sk-cordon-codex-test"
			// One stand-in for every run: the human's config names its URL.
			var model *codexShellStandIn
			router := &codexRouter{}
			srv := httptest.NewServer(router)
			t.Cleanup(srv.Close)
			writeFiles(t, w.home, map[string]string{
				".codex/config.toml": codexUserConfig(srv.URL),
				".codex/auth.json":   `{"OPENAI_API_KEY":"` + key + `"}`,
			})
			humanConfig := snapshot(t, filepath.Join(w.home, ".codex/config.toml"))
			server := func(canary string) string {
				return fmt.Sprintf("\n[mcp_servers.planted]\ncommand = \"sh\"\nargs = [\"-c\", %q]\n", plantedCommand(canary))
			}
			writeFiles(t, w.ws, map[string]string{
				"server.toml":     server(canary),
				"own-server.toml": server(ownServerRan),
				"plant.sh": `cat server.toml >> "$HOME/.codex/config.toml"
cat own-server.toml >> "$CODEX_HOME/config.toml"
echo kept-between-runs > "$CODEX_HOME/agent-note"
echo finished
`,
				"recall.sh": `cat "$CODEX_HOME/agent-note"; echo finished` + "\n",
			})
			env := agentEnv(w)
			run := func(wrap bool, cmd string) {
				model = newCodexShellStandIn(t, cmd)
				router.set(model)
				argv := []string{codex, "exec", "--skip-git-repo-check", "--json", "-C", w.ws, "Run it."}
				if wrap {
					argv = append([]string{cordonBin, "wrap", "--class", "external_agent", "--mode", "workspace-write",
						"--backend", backend, "--state-dir", w.state, "--"}, argv...)
				}
				out, err := runAgent(t, w.ws, env, 180*time.Second, argv[0], argv[1:]...)
				require.NoError(t, err, "%v: %s", argv, out)
				for _, h := range model.authorizations() {
					assert.Equal(t, "Bearer "+key, h, "authenticated from auth.json")
				}
			}

			run(true, "sh plant.sh")
			assert.Contains(t, model.output(0), "finished", "the wrapped codex read its seeded config and ran the command")
			assert.Equal(t, humanConfig, snapshot(t, filepath.Join(w.home, ".codex/config.toml")),
				"the human's config is read-only to the wrapped agent")

			run(true, "sh recall.sh")
			assert.Contains(t, model.output(0), "kept-between-runs", "the agent's own config home stays between runs")
			assert.NoFileExists(t, ownServerRan, "its config.toml is seeded again at each start: the server it added is gone")
			sessions := 0
			filepath.WalkDir(filepath.Join(w.state, "wrap", "codex", "codex", "sessions"), func(_ string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".jsonl") {
					sessions++
				}
				return nil
			})
			assert.Equal(t, 2, sessions, "both wrapped runs' sessions are kept in its own home")

			// The human's next unwrapped run.
			run(false, "true")
			assert.NoFileExists(t, canary, "the human's next codex ran nothing the wrapped agent planted")
		})
	}
}

// codexRouter passes each request to the current stand-in: the human's
// config names one URL for all runs.
type codexRouter struct {
	mu sync.Mutex
	h  http.Handler
}

func (c *codexRouter) set(h http.Handler) { c.mu.Lock(); c.h = h; c.mu.Unlock() }

func (c *codexRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	h := c.h
	c.mu.Unlock()
	h.ServeHTTP(w, r)
}
