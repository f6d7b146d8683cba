//go:build linux

package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// chatStandIn serves POST /v1/chat/completions as an OpenAI-compatible
// API does, streamed or not: the model API that Qwen Code and opencode
// reach through their base URL setting. It finds cordon's tools among the
// request's tools by their name's end (clients prefix them with the
// server's name).
type chatStandIn struct {
	*standIn
	url     string
	systems []string
}

func newChatStandIn(t *testing.T, steps []agentStep) *chatStandIn {
	s := &chatStandIn{standIn: newStandIn(t, steps)}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

const (
	chatCallID   = "call_cordon_%02d"
	chatSearchID = "call_search_cordon"
)

func (s *chatStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		s.t.Logf("chat stand-in: %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests++
	if s.requests == 1 {
		var names []string
		for _, tl := range req.Tools {
			names = append(names, tl.Function.Name)
		}
		s.t.Logf("chat stand-in: the client offers the tools %s", strings.Join(names, ", "))
		if os.Getenv("CORDON_STANDIN_DUMP") != "" {
			os.WriteFile(os.Getenv("CORDON_STANDIN_DUMP"), body, 0o600)
		}
	}
	searched := false
	for _, m := range req.Messages {
		var step int
		switch {
		case m.Role == "tool" && m.ToolCallID == chatSearchID:
			searched = true
		case m.Role == "system":
			s.systems = append(s.systems, chatText(m.Content))
		case m.Role == "tool" && scan(m.ToolCallID, chatCallID, &step):
			s.record(step, unwrapToolError(chatText(m.Content)), string(m.Content))
		}
	}
	var toolCall map[string]any
	finish := "stop"
	offered := map[string]bool{}
	for _, tl := range req.Tools {
		offered[tl.Function.Name] = true
	}
	if i := s.next(); i < len(s.steps) && len(req.Tools) > 0 {
		name, args := s.steps[i].tool, any(s.steps[i].args)
		direct := false
		for n := range offered {
			if strings.HasSuffix(n, "_"+name) && strings.Contains(n, "cordon") {
				name, direct = n, true
			}
		}
		id := fmt.Sprintf(chatCallID, i)
		switch {
		case direct:
		case offered["tool_search"] && !searched:
			// Qwen Code defers MCP tools: review their schemas first, as
			// its tool_search asks.
			var sel []string
			for _, st := range s.steps {
				sel = append(sel, "mcp__cordon__"+st.tool)
			}
			name, args, id = "tool_search", map[string]any{"query": "select:" + strings.Join(sel, ",")}, chatSearchID
		case offered["tool_call"]:
			name, args = "tool_call", map[string]any{"name": "mcp__cordon__" + name, "arguments": s.steps[i].args}
		}
		argsJSON, _ := json.Marshal(args)
		toolCall = map[string]any{"index": 0, "id": id, "type": "function",
			"function": map[string]any{"name": name, "arguments": string(argsJSON)}}
		finish = "tool_calls"
	}
	s.mu.Unlock()

	msg := map[string]any{"role": "assistant", "content": "done"}
	if toolCall != nil {
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{toolCall}}
	}
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-standin", "object": "chat.completion", "created": 1, "model": "standin",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any, usage any) {
		c := map[string]any{"id": "chatcmpl-standin", "object": "chat.completion.chunk", "created": 1, "model": "standin",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			c["usage"] = usage
		}
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk(msg, nil, nil)
	chunk(map[string]any{}, finish, usage)
	io.WriteString(w, "data: [DONE]\n\n")
}

// chatText is a message's content as the model reads it: a string, or the
// text of its parts.
func chatText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var out []string
	for _, p := range parts {
		out = append(out, p.Text)
	}
	return strings.Join(out, "\n")
}

func (s *chatStandIn) system() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.systems, "\n")
}
