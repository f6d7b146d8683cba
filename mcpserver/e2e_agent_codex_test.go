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
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Codex (@openai/codex, whose npm package brings its native binary as an
// optional platform dependency) runs `codex exec` against
// responsesStandIn, a local stand-in of the OpenAI Responses API, set up
// as a custom model provider in a temporary CODEX_HOME, with cordon as its
// only MCP server, over stdio and over Streamable HTTP.

func codexCLI(t *testing.T) string {
	return agentClient(t, "codex", "codex-cli", "run npm ci in test/interop (the native binary is the optional dependency @openai/codex-linux-x64)")
}

// codexHome writes a CODEX_HOME whose config.toml names the stand-in as
// the model provider and cordon as the MCP server, and returns Codex's
// environment. Plugins, analytics and the update check are off: nothing
// leaves loopback.
func codexHome(t *testing.T, w *world, modelURL, transport string) []string {
	home := filepath.Join(w.base, "codex-home")
	require.NoError(t, os.MkdirAll(home, 0o700))
	env := agentEnv(w, "CODEX_HOME="+home, "CORDON_STANDIN_API_KEY=dummy-key")
	server := fmt.Sprintf("command = %q\nargs = [%s]\n", cordonBin, tomlStrings(w.serveArgs()))
	if transport == "http" {
		url, token, _ := w.httpServer(t)
		server = fmt.Sprintf("url = %q\nbearer_token_env_var = \"CORDON_TEST_HTTP_TOKEN\"\n", url)
		env = append(env, "CORDON_TEST_HTTP_TOKEN="+token)
	}
	// model: one Codex knows, so that it treats cordon as for a real user:
	// its tools deferred behind tool_search, the server listed to the
	// model by the start of its instructions (with a model it does not
	// know, Codex sends every tool upfront).
	// default_tools_approval_mode: cordon's own gate asks the human; under
	// approval "never" Codex would refuse every tool that may write.
	config := fmt.Sprintf(`model = "gpt-5.5"
model_provider = "standin"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[features]
plugins = false

[analytics]
enabled = false

[model_providers.standin]
name = "cordon test stand-in"
base_url = %q
wire_api = "responses"
env_key = "CORDON_STANDIN_API_KEY"

[mcp_servers.cordon]
default_tools_approval_mode = "approve"
%s`, modelURL+"/v1", server)
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600))
	return env
}

func tomlStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func TestCodexShowsTheModel(t *testing.T) {
	codex := codexCLI(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			w := agentWorld(t)
			model := newResponsesStandIn(t, agentSteps(w))
			out, err := runAgent(t, w.ws, codexHome(t, w, model.url, transport), 120*time.Second, codex,
				"exec", "--strict-config", "--skip-git-repo-check", "--ephemeral", "--json", "-C", w.ws, "Use the cordon tools.")
			require.NoError(t, err, "codex exec: %s", out)
			assert.Contains(t, out, `"text":"done"`, "the stand-in's last turn ends the run")
			received := model.received()
			checkAgentResults(t, "Codex", w, received)
			// Codex takes results without structuredContent: cordon sends
			// it text alone, so cat's output arrives verbatim.
			require.Greater(t, len(received), 5)
			assert.Equal(t, strings.Replace(agentFile, "beta", "gamma", 1), received[5], "Codex hands the model cat's output verbatim")
			checkInstructionsShown(t, "Codex", model.instructions())
		})
	}
}

// responsesStandIn serves POST /v1/responses as server-sent events. Codex
// defers MCP tools behind its tool_search tool, so the stand-in first
// searches for cordon's namespace, as a model would, then makes the
// scripted function calls in it.
type responsesStandIn struct {
	*standIn
	url     string
	context []string // the input texts the model was shown
}

func newResponsesStandIn(t *testing.T, steps []agentStep) *responsesStandIn {
	s := &responsesStandIn{standIn: newStandIn(t, steps)}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

const (
	codexCallID   = "call_cordon_%02d"
	codexSearchID = "search_cordon"
)

func (s *responsesStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Path != "/v1/responses" {
		s.t.Logf("responses stand-in: unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	var req struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}

	s.mu.Lock()
	s.requests++
	searched := false
	for _, raw := range req.Input {
		var it struct {
			Type    string          `json:"type"`
			CallID  string          `json:"call_id"`
			Output  json.RawMessage `json:"output"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		json.Unmarshal(raw, &it)
		var step int
		switch {
		case it.Type == "message":
			for _, c := range it.Content {
				s.context = append(s.context, c.Text)
			}
		case it.Type == "tool_search_output" && it.CallID == codexSearchID:
			searched = true
		case it.Type == "function_call_output" && scan(it.CallID, codexCallID, &step):
			s.record(step, codexOutput(it.Output), string(raw))
		}
	}
	var item map[string]any
	switch i := s.next(); {
	case !searched:
		item = map[string]any{"type": "tool_search_call", "call_id": codexSearchID, "execution": "client",
			"arguments": map[string]any{"query": "cordon sandbox read_file edit_file bash write_file", "limit": 20}}
	case i < len(s.steps):
		args, _ := json.Marshal(s.steps[i].args)
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", i), "call_id": fmt.Sprintf(codexCallID, i),
			"namespace": "mcp__cordon", "name": s.steps[i].tool, "arguments": string(args)}
	default:
		item = map[string]any{"type": "message", "id": "msg_done", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "done", "annotations": []any{}}}}
	}
	id := fmt.Sprintf("resp_standin_%d", s.requests)
	s.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": id,
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 20}}})
}

// codexOutput is a function_call_output as the model reads it, without
// the "Wall time: …\nOutput:\n" lines Codex puts before an MCP tool's
// result.
func codexOutput(raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) != nil {
		var items []struct {
			Text string `json:"text"`
		}
		json.Unmarshal(raw, &items)
		var parts []string
		for _, it := range items {
			parts = append(parts, it.Text)
		}
		text = strings.Join(parts, "\n")
	}
	if strings.HasPrefix(text, "Wall time: ") {
		if _, rest, ok := strings.Cut(text, "\nOutput:\n"); ok {
			return rest
		}
	}
	return text
}

// instructions are cordon's instructions as Codex showed them: the line
// of its "Deferred tool namespaces" list for mcp__cordon.
func (s *responsesStandIn) instructions() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, text := range s.context {
		if _, rest, ok := strings.Cut(text, "\n- mcp__cordon: "); ok {
			shown, _, _ := strings.Cut(rest, "\n")
			s.t.Logf("Codex lists cordon to the model as %q", shown)
			return shown
		}
	}
	return ""
}

// TestCodexLongForegroundGoesOnInTheBackground: through the real Codex, a
// foreground command that outruns the session's limit (2 s here; two
// minutes by default) is handed over to the background: the model gets
// its output so far and a process_id, and process_output later shows how
// it ended. Codex waited 75 s for a call without cutting it, so the
// default limit hands over well before any cut of the client's.
func TestCodexLongForegroundGoesOnInTheBackground(t *testing.T) {
	codex := codexCLI(t)
	w := newWorld(t)
	cfg := filepath.Join(w.home, ".config", "cordon")
	require.NoError(t, os.MkdirAll(cfg, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cfg, "config.toml"), []byte("bash.timeout = \"2s\"\n"), 0o644))
	model := newResponsesStandIn(t, []agentStep{
		{"bash", map[string]any{"command": "echo compiling; sleep 6; echo build-done"}},
		{"process_output", map[string]any{"process_id": "p1", "wait_ms": 30000}},
		{"process_output", map[string]any{"process_id": "p1", "wait_ms": 30000}},
	})
	out, err := runAgent(t, w.ws, codexHome(t, w, model.url, "stdio"), 120*time.Second, codex,
		"exec", "--strict-config", "--skip-git-repo-check", "--ephemeral", "--json", "-C", w.ws, "Use the cordon tools.")
	require.NoError(t, err, "codex exec: %s", out)
	received := model.received()
	require.Len(t, received, 3)
	assert.Contains(t, received[0], "compiling\n")
	assert.Contains(t, received[0], "[still running after 2s: it goes on as background process p1", "the model learns the command goes on, and its id")
	assert.NotContains(t, received[0], "build-done")
	later := received[1] + received[2]
	assert.Contains(t, later, "build-done\n", "process_output shows the rest")
	assert.Contains(t, later, "[process p1 exited 0]")
}
