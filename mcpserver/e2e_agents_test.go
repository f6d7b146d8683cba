//go:build linux

package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Real agent clients, Claude Code and Codex, installed from npm by .ci/run
// (pinned in test/interop/package-lock.json), drive cordon while a local
// stand-in of their model's API plays the model: it answers each turn
// with the next scripted call of a cordon tool and records what the client
// sends back as that call's result. The record is what a real model would
// have read, and these tests assert on it (SPEC §5: what the model
// receives is the product). Everything stays on loopback.

// agentFile is what read_file must hand the model verbatim: double
// quotes, backslashes (and a backslash-n that is two characters) and tabs,
// all of which a JSON encoding would escape.
const agentFile = "say \"hi\" to C:\\Users\\me; \\n stays two characters\n\tindented\twith tabs\nbeta\n"

// agentStep is one tool call the stand-in model makes.
type agentStep struct {
	tool string
	args map[string]any
}

// agentSteps is the stand-in model's script, the same for every client:
// read a file, edit it, run a command, try a write the sandbox refuses.
func agentSteps(w *world) []agentStep {
	return []agentStep{
		{"read_file", map[string]any{"path": "quoted.txt"}},
		{"edit_file", map[string]any{"path": "quoted.txt", "old_string": "beta", "new_string": "gamma"}},
		{"bash", map[string]any{"command": "printf 'out-%s\\n' $((40+2))"}},
		{"write_file", map[string]any{"path": filepath.Join(w.outside, "new.txt"), "content": "no\n"}},
		{"read_file", map[string]any{"path": "page.txt"}},
		{"bash", map[string]any{"command": "cat quoted.txt"}},
		{"grep", map[string]any{"pattern": "C:\\\\Users", "path": "quoted.txt"}},
	}
}

// pageLines is how many short lines page.txt has: a default 2,000-line
// page of them is over 30,000 characters, more than Codex passes on.
const pageLines = 3000

// agentWorld is a world with the file the script reads.
func agentWorld(t *testing.T) *world {
	w := newWorld(t)
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "quoted.txt"), []byte(agentFile), 0o644))
	var page strings.Builder
	for i := 1; i <= pageLines; i++ {
		fmt.Fprintf(&page, "line %d\n", i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "page.txt"), []byte(page.String()), 0o644))
	return w
}

// checkAgentResults asserts what the model received for each step.
// received[i] is the result of step i as the client handed it to the
// model, with the client's own framing (Codex's "Wall time: …") removed.
func checkAgentResults(t *testing.T, client string, w *world, received []string) {
	t.Helper()
	steps := agentSteps(w)
	require.Len(t, received, len(steps), "%s sent back a result for every call", client)

	// read_file: the file's exact lines, after the header, not JSON-escaped.
	want := "[" + filepath.Join(w.ws, "quoted.txt") + ": lines 1-3 of 3]\n" +
		"     1\tsay \"hi\" to C:\\Users\\me; \\n stays two characters\n" +
		"     2\t\tindented\twith tabs\n" +
		"     3\tbeta\n"
	page := withoutInstructions(received[0])
	assert.Equal(t, want, page, "%s hands the model read_file's text verbatim", client)
	assert.False(t, json.Valid([]byte(page)), "read_file reaches the model as text, not JSON")

	// edit_file: the diff, from the text or from structuredContent.diff.
	assert.Contains(t, field(received[1], "diff"), "-beta\n+gamma\n", "%s shows the model the edit's diff", client)
	// bash: the command's output.
	assert.Equal(t, "out-42\n", field(received[2], "output"), "%s shows the model the command's output", client)
	// The refused write: the denial marker, first.
	marker := "[sandbox: file access denied under workspace-write mode]"
	assert.True(t, strings.HasPrefix(field(received[3], "error", "message"), marker),
		"%s shows the model the denial marker: %q", client, received[3])
	assert.Contains(t, field(received[3], "error", "message"), "sandbox_permissions", "and the escalation hint")

	// A default page: every line from 1 to the last one shown, none
	// missing, and the footer continues right after it, whether the page
	// is whole or cordon cut it to what the client passes on.
	checkPageWhole(t, client, received[4])
	// bash cat of the same lines, and a grep match: their content,
	// whether the client hands the model the text or the JSON of the
	// structuredContent (escaped: SPEC keeps it for these tools).
	edited := strings.Replace(agentFile, "beta", "gamma", 1)
	assert.Equal(t, edited, field(received[5], "output"), "%s shows the model cat's output", client)
	assert.Contains(t, grepMatches(received[6]), `quoted.txt:1:say "hi" to C:\Users\me; \n stays two characters`, "%s shows the model the grep match", client)
	t.Logf("%s hands the model bash output verbatim: %v", client, strings.Contains(received[5], `say "hi" to C:\Users`))

	assert.Equal(t, strings.Replace(agentFile, "beta", "gamma", 1), fileContent(t, filepath.Join(w.ws, "quoted.txt")), "the edit landed")
	assert.Equal(t, "<absent>", fileContent(t, filepath.Join(w.outside, "new.txt")), "the refused write did not")
}

// checkPageWhole asserts that a read_file page of page.txt that reached the
// model has no hole it was not told about.
func checkPageWhole(t *testing.T, client, page string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(page, "\n"), "\n")
	require.Greater(t, len(lines), 2, "%s: %q", client, page)
	n := 0
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "[") {
			break
		}
		n++
		require.Equal(t, fmt.Sprintf("%6d\tline %d", n, n), l, "%s hands the model the page's lines in order, none missing", client)
	}
	footer := fmt.Sprintf("[showing lines 1-%d of %d; call read_file with offset=%d to continue]", n, pageLines, n+1)
	assert.Equal(t, footer, lines[len(lines)-1], "%s: the footer's offset follows the last line the model got", client)
	assert.LessOrEqual(t, n, 2000)
}

// checkRootsSetAside asserts that the client, started outside the
// workspace, declared its own directory as its roots and cordon set them
// aside (the edit in the workspace landed: checkAgentResults).
func checkRootsSetAside(t *testing.T, client string, w *world) {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(w.state, "sessions", "*.jsonl"))
	require.NoError(t, err)
	var all strings.Builder
	for _, l := range logs {
		all.WriteString(fileContent(t, l))
	}
	assert.Contains(t, all.String(), `"type":"roots","data":{"roots":["`+w.outside+`"]`, "%s sends its own directory as its roots", client)
	assert.Contains(t, all.String(), `"set_aside":true`, "%s: cordon set the roots aside", client)
}

// grepMatches is grep's matches as the model can read them: from the text,
// or from structuredContent.matches.
func grepMatches(received string) string {
	for _, doc := range []string{received, strings.SplitN(received, "\n", 2)[0]} {
		var v struct {
			Matches []string `json:"matches"`
		}
		if json.Unmarshal([]byte(doc), &v) == nil && v.Matches != nil {
			return strings.Join(v.Matches, "\n")
		}
	}
	return received
}

// unwrapToolError takes away the sentence Gemini CLI and Qwen Code put
// around an MCP tool error ("MCP tool 'NAME' reported tool error for
// function call: {…} with response: [the result as JSON]"), leaving the
// text of the result, which the model reads inside it.
func unwrapToolError(s string) string {
	_, parts, ok := strings.Cut(s, " with response: ")
	if !ok || !strings.HasPrefix(s, "MCP tool ") {
		return s
	}
	var resp []struct {
		FunctionResponse struct {
			Response struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				Error *struct {
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"error"`
			} `json:"response"`
		} `json:"functionResponse"`
	}
	if json.Unmarshal([]byte(parts), &resp) != nil || len(resp) == 0 {
		return s
	}
	content := resp[0].FunctionResponse.Response.Content
	if e := resp[0].FunctionResponse.Response.Error; e != nil {
		content = e.Content
	}
	if len(content) == 0 {
		return s
	}
	return content[0].Text
}

// field is what the model can read of one result: when the client passed
// it structuredContent (a JSON object), the string at path in it; else
// the text itself. A client that passes both (Qwen Code) shows the JSON on
// the first line and the text after it: the string at path when the JSON
// has it, else the text.
func field(received string, path ...string) string {
	if s, ok := jsonField(received, path); ok {
		return s
	}
	if first, rest, ok := strings.Cut(received, "\n"); ok && json.Valid([]byte(first)) && strings.HasPrefix(first, "{") {
		if s, ok := jsonField(first, path); ok {
			return s
		}
		return rest
	}
	return received
}

func jsonField(doc string, path []string) (string, bool) {
	var v any
	if json.Unmarshal([]byte(doc), &v) != nil {
		return "", false
	}
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, ok := v.(string)
	return s, ok || !strings.HasPrefix(doc, "{")
}

// checkInstructionsShown asserts that the instructions, as the client
// shows them to the model, say within 200 characters how to ask for
// wider access.
func checkInstructionsShown(t *testing.T, client, shown string) {
	t.Helper()
	require.NotEmpty(t, shown, "%s shows the model cordon's instructions", client)
	lead := string([]rune(shown)[:min(200, len([]rune(shown)))])
	for _, want := range []string{"cordon", "Mode: workspace-write.", "sandbox_permissions", "justification"} {
		assert.Contains(t, lead, want, "the first 200 characters %s shows: %q", client, lead)
	}
}

// withoutInstructions is a result as the model got it, less the
// instructions cordon put at its head for a client that does not show
// them (checkInstructionsGiven checks those).
func withoutInstructions(received string) string {
	const heading = "[cordon's instructions, which your client does not show you]\n"
	if !strings.HasPrefix(received, heading) {
		return received
	}
	_, rest, _ := strings.Cut(received, "\n\n")
	return rest
}

// checkInstructionsGiven: a client that does not show its model the
// instructions of initialize (system is all the client put before the
// conversation) gets them, once, at the head of the first result. If a
// client update starts showing them, this fails: set Instructions in
// tools/clients.go, so that its model does not get them twice.
func checkInstructionsGiven(t *testing.T, client, system string, received []string) {
	t.Helper()
	require.NotContains(t, system, "cordon: sandboxed", "%s now shows the model cordon's instructions: set Instructions in its entry of tools/clients.go", client)
	require.NotEmpty(t, received)
	first := received[0]
	require.Contains(t, first, "cordon's instructions, which your client does not show you", "%s: the first result the model gets carries the instructions: %q", client, first)
	checkInstructionsShown(t, client, first[strings.Index(first, "cordon: sandboxed"):])
	for _, r := range received[1:] {
		assert.NotContains(t, r, "cordon's instructions", "%s: the instructions come once", client)
	}
}

// agentClient returns test/interop's installed copy of an npm client,
// once `BIN --version` shows it runs: skipped where it is not installed,
// unless CORDON_INTEROP is set (CI), where it must run.
func agentClient(t *testing.T, bin, wantVersion, fix string) string {
	t.Helper()
	path, _ := filepath.Abs(filepath.Join("../test/interop/node_modules/.bin", bin))
	out, err := exec.Command(path, "--version").CombinedOutput()
	if err == nil && !strings.Contains(string(out), wantVersion) {
		err = fmt.Errorf("--version printed %q", out)
	}
	if err != nil {
		msg := fmt.Sprintf("%s cannot run (%v: %s); %s", path, err, bytes.TrimSpace(out), fix)
		if os.Getenv("CORDON_INTEROP") != "" {
			t.Fatalf("CORDON_INTEROP is set but %s", msg)
		}
		t.Skipf("%s; CI installs it and sets CORDON_INTEROP=1", msg)
	}
	t.Logf("%s", bytes.TrimSpace(out))
	return path
}

// agentEnv is a client's environment: the world's (its HOME), without the
// settings of whatever client or proxy runs these tests, plus extra.
func agentEnv(w *world, extra ...string) []string {
	var env []string
	for _, kv := range w.env() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "ANTHROPIC_"), strings.HasPrefix(k, "CLAUDE"), strings.HasPrefix(k, "CODEX_"),
			strings.HasPrefix(k, "OPENAI_"), strings.HasSuffix(strings.ToUpper(k), "_PROXY"):
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// runAgent runs a client to completion, or kills it and everything it
// started (cordon included) after timeout.
func runAgent(t *testing.T, dir string, env []string, timeout time.Duration, bin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	// PWD too: a client that takes its directory from it (opencode) would
	// otherwise be where the test runs.
	cmd.Dir, cmd.Env = dir, append(slices.Clip(env), "PWD="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	killGroupOnCancel(cmd)
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s %s: %v in %s", filepath.Base(bin), args[0], err, time.Since(start).Round(time.Millisecond))
	if stderr.Len() > 0 && (err != nil || testing.Verbose()) {
		t.Logf("stderr:\n%s", stderr.String())
	}
	return stdout.String(), err
}

// standIn is what the model stand-ins share: the script and what came
// back for each step.
type standIn struct {
	t     *testing.T
	steps []agentStep

	mu       sync.Mutex
	results  map[int]string // step → what the client sent back, as the model reads it
	raw      map[int]string // step → the result as sent, for the log
	requests int
}

func newStandIn(t *testing.T, steps []agentStep) *standIn {
	return &standIn{t: t, steps: steps, results: map[int]string{}, raw: map[int]string{}}
}

// record keeps step's result, the first time it comes back.
func (s *standIn) record(step int, forModel, raw string) {
	if _, ok := s.results[step]; !ok && step >= 0 && step < len(s.steps) {
		s.results[step] = forModel
		s.raw[step] = raw
	}
}

// next is the first step without a result, or len(steps) when all have one.
func (s *standIn) next() int {
	for i := range s.steps {
		if _, ok := s.results[i]; !ok {
			return i
		}
	}
	return len(s.steps)
}

// received lists the results in step order, as far as they came back.
func (s *standIn) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for i := range s.steps {
		r, ok := s.results[i]
		if !ok {
			break
		}
		out = append(out, r)
		s.t.Logf("step %d (%s): the client sent back %s", i, s.steps[i].tool, s.raw[i])
	}
	return out
}

// sse writes one server-sent event.
func sse(w http.ResponseWriter, event string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// killGroupOnCancel makes cmd lead a process group that its context's end
// kills whole: node and the cordon it started, say.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
}
