//go:build linux

package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Gemini CLI (@google/gemini-cli) runs `gemini -p` against geminiStandIn,
// a local stand-in of the Gemini API reached through
// GOOGLE_GEMINI_BASE_URL, with cordon as its only MCP server. It is
// started in another directory than cordon's workspace, as a user starts
// it anywhere: it answers roots/list with that directory, which must not
// make the workspace read-only.

func geminiCLI(t *testing.T) string {
	return agentClient(t, "gemini", "0.61.0", "run npm ci in test/interop")
}

// geminiHome writes a HOME whose settings name cordon as the MCP server
// (trusted: cordon's own gate asks the human) and the API key auth.
func geminiHome(t *testing.T, w *world, modelURL string) []string {
	dir := filepath.Join(w.home, ".gemini")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	settings := map[string]any{
		"mcpServers": map[string]any{"cordon": map[string]any{"command": cordonBin, "args": w.serveArgs(), "trust": true}},
		"security":   map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": false}},
		"general":    map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":    map[string]any{"usageStatisticsEnabled": false},
		"telemetry":  map[string]any{"enabled": false},
	}
	b, err := json.Marshal(settings)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600))
	return agentEnv(w, "GOOGLE_GEMINI_BASE_URL="+modelURL, "GEMINI_API_KEY=dummy-key", "GEMINI_CLI_NO_RELAUNCH=true", "NO_BROWSER=1")
}

func TestGeminiCLIShowsTheModel(t *testing.T) {
	gemini := geminiCLI(t)
	w := agentWorld(t)
	model := newGeminiStandIn(t, agentSteps(w))
	out, err := runAgent(t, w.outside, geminiHome(t, w, model.url), 180*time.Second, gemini,
		"-m", "gemini-2.5-pro", "-p", "Use the cordon tools.", "--approval-mode", "yolo", "--output-format", "text")
	require.NoError(t, err, "gemini -p: %s", out)
	checkAgentResults(t, "Gemini CLI", w, model.received())
	checkRootsSetAside(t, "Gemini CLI", w)
	checkInstructionsGiven(t, "Gemini CLI", model.system(), model.received())
}

// geminiStandIn serves models/*:streamGenerateContent (and
// :generateContent) as the Gemini API does. It finds cordon's tools among
// the function declarations by their name's end (Gemini CLI may prefix
// them with the server's name).
type geminiStandIn struct {
	*standIn
	url     string
	systems []string
}

func newGeminiStandIn(t *testing.T, steps []agentStep) *geminiStandIn {
	s := &geminiStandIn{standIn: newStandIn(t, steps)}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

type geminiPart struct {
	Text         string          `json:"text,omitempty"`
	FunctionCall json.RawMessage `json:"functionCall,omitempty"`
	FunctionResp *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse,omitempty"`
}

func (s *geminiStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if !strings.Contains(r.URL.Path, ":streamGenerateContent") && !strings.Contains(r.URL.Path, ":generateContent") {
		s.t.Logf("gemini stand-in: %s %s", r.Method, r.URL.Path)
		if strings.Contains(r.URL.Path, ":countTokens") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"totalTokens": 10}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	var req struct {
		Contents []struct {
			Role  string       `json:"role"`
			Parts []geminiPart `json:"parts"`
		} `json:"contents"`
		System *struct {
			Parts []geminiPart `json:"parts"`
		} `json:"systemInstruction"`
		Tools []struct {
			Decls []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests++
	if req.System != nil {
		for _, p := range req.System.Parts {
			s.systems = append(s.systems, p.Text)
		}
	}
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			var step int
			if p.FunctionResp != nil && scan(p.FunctionResp.ID, "cordon_step_%02d", &step) {
				raw, _ := json.Marshal(p.FunctionResp)
				s.record(step, geminiOutput(p.FunctionResp.Response), string(raw))
			}
		}
	}
	var part map[string]any
	if i := s.next(); i < len(s.steps) {
		name := s.steps[i].tool
		for _, tl := range req.Tools {
			for _, d := range tl.Decls {
				if d.Name == name || strings.HasSuffix(d.Name, "__"+name) || strings.HasSuffix(d.Name, "_"+name) && strings.Contains(d.Name, "cordon") {
					name = d.Name
				}
			}
		}
		part = map[string]any{"functionCall": map[string]any{"id": "cordon_step_" + twoDigits(i), "name": name, "args": s.steps[i].args}}
	} else {
		part = map[string]any{"text": "done"}
	}
	s.mu.Unlock()

	chunk := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
		"modelVersion":  "gemini-2.5-pro",
	}
	b, _ := json.Marshal(chunk)
	if strings.Contains(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+string(b)+"\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func twoDigits(i int) string { return string([]byte{byte('0' + i/10), byte('0' + i%10)}) }

// geminiOutput is a functionResponse as the model reads it, without
// Gemini CLI's own framing: it wraps an MCP tool's text in
// <untrusted_context> lines, and puts a tool error in response.error as
// "MCP tool 'NAME' reported tool error for function call: {…} with
// response: [the result's parts as JSON]".
func geminiOutput(raw json.RawMessage) string {
	var r struct {
		Output  *string `json:"output"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Error *string `json:"error"`
	}
	json.Unmarshal(raw, &r)
	switch {
	case r.Output != nil:
		out := strings.TrimPrefix(*r.Output, "<untrusted_context>\n")
		out = strings.TrimSuffix(out, "\n</untrusted_context>")
		return out
	case r.Error != nil:
		return unwrapToolError(*r.Error)
	case len(r.Content) > 0:
		var parts []string
		for _, c := range r.Content {
			parts = append(parts, c.Text)
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}

func (s *geminiStandIn) system() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.systems, "\n")
}
