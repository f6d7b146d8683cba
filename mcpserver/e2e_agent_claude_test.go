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

// Claude Code (@anthropic-ai/claude-code) runs `claude -p` against
// anthropicStandIn, a local stand-in of the Anthropic Messages API, with
// cordon as its only MCP server, over stdio and over Streamable HTTP.

func claudeCode(t *testing.T) string {
	return agentClient(t, "claude", "(Claude Code)",
		"run npm ci in test/interop, then node node_modules/@anthropic-ai/claude-code/install.cjs (npm ci --ignore-scripts leaves a placeholder binary)")
}

// claudeEnv points Claude Code at the stand-in, with a dummy key, MCP tool
// schemas sent upfront (no ToolSearch step) and no traffic of its own.
func claudeEnv(w *world, baseURL string) []string {
	return agentEnv(w, "ANTHROPIC_BASE_URL="+baseURL, "ANTHROPIC_API_KEY=sk-ant-dummy-key",
		"ENABLE_TOOL_SEARCH=false", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")
}

// claudeMCPConfig writes the --mcp-config file naming cordon on transport.
func claudeMCPConfig(t *testing.T, w *world, transport string) string {
	server := map[string]any{"type": "stdio", "command": cordonBin, "args": w.serveArgs()}
	if transport == "http" {
		url, token, _ := w.httpServer(t)
		server = map[string]any{"type": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer " + token}}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"cordon": server}})
	require.NoError(t, err)
	path := filepath.Join(w.base, "mcp.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

func TestClaudeCodeShowsTheModel(t *testing.T) {
	claude := claudeCode(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			w := agentWorld(t)
			model := newAnthropicStandIn(t, agentSteps(w))
			out, err := runAgent(t, w.ws, claudeEnv(w, model.url), 120*time.Second, claude,
				"-p", "Use the cordon tools.", "--mcp-config", claudeMCPConfig(t, w, transport), "--strict-mcp-config",
				"--allowedTools", "mcp__cordon", "--output-format", "json", "--no-session-persistence")
			require.NoError(t, err, "claude -p: %s", out)
			var final struct {
				IsError bool   `json:"is_error"`
				Result  string `json:"result"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &final), out)
			assert.False(t, final.IsError, out)
			assert.Equal(t, "done", final.Result, "the stand-in's last turn ends the run")
			checkAgentResults(t, "Claude Code", w, model.received())
			checkInstructionsShown(t, "Claude Code", model.instructions())
		})
	}
}

// TestClaudeCodeMCPList: `claude mcp list`, which connects to each server,
// reports cordon connected over stdio and over HTTP (with the bearer token
// from the state dir), and leaves no line in `cordon sessions`.
func TestClaudeCodeMCPList(t *testing.T) {
	claude := claudeCode(t)
	w := newWorld(t)
	url, token, _ := w.httpServer(t)
	model := newAnthropicStandIn(t, nil) // never called; keeps Claude Code off the network
	env := claudeEnv(w, model.url)
	add := append([]string{"mcp", "add", "--scope", "user", "cordon", "--", cordonBin}, w.serveArgs()...)
	_, err := runAgent(t, w.ws, env, 30*time.Second, claude, add...)
	require.NoError(t, err)
	_, err = runAgent(t, w.ws, env, 30*time.Second, claude,
		"mcp", "add", "--scope", "user", "--transport", "http", "cordon-http", url, "--header", "Authorization: Bearer "+token)
	require.NoError(t, err)
	before := cordonCLI(t, w, "sessions") // the HTTP server's own
	out, err := runAgent(t, w.ws, env, 60*time.Second, claude, "mcp", "list")
	require.NoError(t, err)
	t.Log(out)
	assert.Contains(t, out, "cordon: "+cordonBin+" serve ", "the stdio server is listed")
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "cordon: ") {
			assert.True(t, strings.HasSuffix(line, "✔ Connected"), "over stdio: %q", line)
		}
		if strings.HasPrefix(line, "cordon-http: ") {
			assert.Equal(t, "cordon-http: "+url+" (HTTP) - ✔ Connected", line, "over HTTP")
		}
	}
	assert.Contains(t, out, "cordon-http: "+url)
	// Its health checks called no tool: `cordon sessions` does not list
	// them.
	var after string
	assert.Eventually(t, func() bool { after = cordonCLI(t, w, "sessions"); return after == before },
		30*time.Second, 200*time.Millisecond, "claude mcp list's health checks are not listed once they end:\n%s", after)
}

// anthropicStandIn serves /v1/messages (streamed or not) and
// /v1/messages/count_tokens. A request that offers cordon's tools gets the
// next scripted tool_use; any other (a side request of the client's own)
// gets a plain answer.
type anthropicStandIn struct {
	*standIn
	url     string
	context []string // the texts of the requests that offer cordon's tools
	// prefix is what the scripted tool names get: cordon's tools as Claude
	// Code names them, or "" for its own (Bash).
	prefix string
}

func newAnthropicStandIn(t *testing.T, steps []agentStep) *anthropicStandIn {
	return newAnthropicStandInNaming(t, steps, "mcp__cordon__")
}

// newAnthropicStandInNaming scripts tools named prefix+step.tool; the
// prefix is fixed before the server starts, as its handler reads it.
func newAnthropicStandInNaming(t *testing.T, steps []agentStep, prefix string) *anthropicStandIn {
	s := &anthropicStandIn{standIn: newStandIn(t, steps), prefix: prefix}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// anthropicBlock is a content block of the Messages API.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	raw       json.RawMessage // the block as the client sent it
}

// blocks reads a content that is a string or a list of blocks.
func blocks(raw json.RawMessage) []anthropicBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s, raw: raw}}
	}
	var raws []json.RawMessage
	json.Unmarshal(raw, &raws)
	bs := make([]anthropicBlock, len(raws))
	for i, r := range raws {
		json.Unmarshal(r, &bs[i])
		bs[i].raw = r
	}
	return bs
}

const claudeToolUseID = "toolu_cordon_%02d"

func (s *anthropicStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch r.URL.Path {
	case "/v1/messages/count_tokens":
		json.NewEncoder(w).Encode(map[string]any{"input_tokens": 100})
		return
	case "/v1/messages":
	default:
		s.t.Logf("anthropic stand-in: unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	offered := false
	for _, tool := range req.Tools {
		if s.prefix != "" {
			offered = offered || strings.HasPrefix(tool.Name, s.prefix)
		} else {
			offered = offered || (len(s.steps) > 0 && tool.Name == s.steps[0].tool)
		}
	}

	s.mu.Lock()
	s.requests++
	var content []map[string]any
	stop := "end_turn"
	if offered {
		// The context the model reads: the system prompt and every text
		// block (Claude Code puts some of its context in messages).
		for _, b := range blocks(req.System) {
			s.context = append(s.context, b.Text)
		}
		for _, m := range req.Messages {
			for _, b := range blocks(m.Content) {
				if b.Type == "text" {
					s.context = append(s.context, b.Text)
				}
				var step int
				if b.Type != "tool_result" || !scan(b.ToolUseID, claudeToolUseID, &step) {
					continue
				}
				var text []string
				for _, c := range blocks(b.Content) {
					text = append(text, c.Text)
				}
				s.record(step, strings.Join(text, "\n"), string(b.raw))
			}
		}
		if i := s.next(); i < len(s.steps) {
			content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf(claudeToolUseID, i),
				"name": s.prefix + s.steps[i].tool, "input": s.steps[i].args})
			stop = "tool_use"
		} else {
			content = append(content, map[string]any{"type": "text", "text": "done"})
		}
	} else {
		content = append(content, map[string]any{"type": "text", "text": "ok"})
	}
	s.mu.Unlock()

	msg := map[string]any{"id": fmt.Sprintf("msg_standin_%d", s.requests), "type": "message", "role": "assistant", "model": req.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 10}}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	sse(w, "message_start", map[string]any{"type": "message_start", "message": start})
	for i, c := range content {
		switch c["type"] {
		case "tool_use":
			input, _ := json.Marshal(c["input"])
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": c["id"], "name": c["name"], "input": map[string]any{}}})
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		default:
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": c["text"]}})
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 10}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

// instructions are cordon's instructions as Claude Code showed them to
// the model, under "## cordon" among its MCP server instructions.
func (s *anthropicStandIn) instructions() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, text := range s.context {
		if _, rest, ok := strings.Cut(text, "\n## cordon\n"); ok {
			shown, _, _ := strings.Cut(rest, "\n\n")
			s.t.Logf("Claude Code shows the model cordon's instructions as %q", shown)
			return shown
		}
	}
	return ""
}

// scan parses s with format, reporting whether it matched whole.
func scan(s, format string, v *int) bool {
	_, err := fmt.Sscanf(s, format, v)
	return err == nil && fmt.Sprintf(format, *v) == s
}
