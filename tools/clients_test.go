package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientTable: every entry names the client version it was measured
// with, and an unknown client gets the safe default.
func TestClientTable(t *testing.T) {
	for _, h := range tools.ClientTable() {
		assert.NotEmpty(t, h.Name)
		assert.Contains(t, []tools.Delivery{tools.DeliversText, tools.DeliversStructured, tools.DeliversBoth}, h.Delivers, h.Name)
		assert.Positive(t, h.Budget, h.Name)
		assert.Regexp(t, `\d+\.\d+\.\d+$`, h.MeasuredWith, h.Name)
	}
	d := tools.HabitsFor("some-new-client")
	assert.Equal(t, tools.DefaultMaxOutput, d.Budget)
	assert.Equal(t, tools.Delivery(""), d.Delivers, "unknown: both text and structuredContent are sent")
	assert.Equal(t, tools.DeliversStructured, tools.HabitsFor("codex-mcp-client").Delivers)
	assert.Equal(t, tools.DeliversBoth, tools.HabitsFor("qwen-cli-mcp-client-cordon").Delivers)
	assert.True(t, d.Instructions, "unknown: taken to show the instructions, as MCP asks")
	assert.False(t, tools.HabitsFor("gemini-cli-mcp-client").Instructions)
}

// TestClientTableMatchesTheLockFile: every client in the table was
// measured with the version test/interop's lock file pins, which the
// agent tests run: moving a client to a new version means measuring it
// again, and saying so in its entry.
func TestClientTableMatchesTheLockFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "test", "interop", "package-lock.json"))
	require.NoError(t, err)
	var lock struct {
		Packages map[string]struct{ Version string } `json:"packages"`
	}
	require.NoError(t, json.Unmarshal(b, &lock))
	for _, h := range tools.ClientTable() {
		pkg, version, ok := strings.Cut(h.MeasuredWith, " ")
		require.True(t, ok, "%s: MeasuredWith is PACKAGE VERSION: %q", h.Name, h.MeasuredWith)
		pinned, ok := lock.Packages["node_modules/"+pkg]
		if assert.True(t, ok, "%s: %s is not in test/interop's lock file", h.Name, pkg) {
			assert.Equal(t, pinned.Version, version, "%s was measured with %s %s, and the agent tests run %s", h.Name, pkg, version, pinned.Version)
		}
	}
}

// TestReadFilePageFitsClientBudget: through Codex, a default page of a
// file of short lines is cut by cordon within the budget at a line
// boundary, and the footer's offset is the line right after the last one
// shown, so Codex's own middle cut never takes lines away unannounced.
func TestReadFilePageFitsClientBudget(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "many.txt", plainLines(3000))
	codex := tools.HabitsFor("codex-mcp-client")
	w.call.Session.SetClient(codex)
	res, terr := w.tb.ReadFile(context.Background(), w.call, tools.ReadFileInput{Path: "many.txt"})
	require.Nil(t, terr)
	assert.LessOrEqual(t, utf8.RuneCountInString(res.Text), codex.Budget)
	m := regexp.MustCompile(`\[showing lines 1-(\d+) of 3000; call read_file with offset=(\d+) to continue\]\n$`).FindStringSubmatch(res.Text)
	require.NotNil(t, m, res.Text[len(res.Text)-200:])
	last, _ := strconv.Atoi(m[1])
	next, _ := strconv.Atoi(m[2])
	assert.Equal(t, last+1, next)
	assert.Less(t, last, 2000, "the page was cut below the default limit")
	assert.Contains(t, res.Text, numbered(1, last)+"[showing", "every line up to the footer's, none missing")
	assert.Contains(t, res.Text, fmt.Sprintf("lines 1-%d of 3000, truncated]", last))

	res, terr = w.tb.ReadFile(context.Background(), w.call, tools.ReadFileInput{Path: "many.txt", Offset: next})
	require.Nil(t, terr)
	assert.True(t, strings.HasPrefix(strings.SplitN(res.Text, "\n", 2)[1], fmt.Sprintf("%6d\tline %d\n", next, next)))

	w.call.Session.SetClient(tools.HabitsFor("claude-code"))
	res, terr = w.tb.ReadFile(context.Background(), w.call, tools.ReadFileInput{Path: "many.txt"})
	require.Nil(t, terr)
	assert.Contains(t, res.Text, "lines 1-2000 of 3000", "a page within Claude Code's budget stays whole")
}

// TestShapeBothSendsTheOutputOnce: Qwen Code passes the text and the
// structuredContent, so the output goes in the text only.
func TestShapeBothSendsTheOutputOnce(t *testing.T) {
	out := "say \"hi\"\tthere \\ end\n"
	r := &tools.Result{Text: out, Structured: map[string]any{"output": out, "exit_code": 0, "truncated": false}}
	r = tools.Shape(r, tools.HabitsFor("qwen-cli-mcp-client-cordon"), 30000)
	assert.Equal(t, out, r.Text)
	assert.NotContains(t, r.Structured, "output")
	assert.Equal(t, 0, r.Structured["exit_code"])

	r = &tools.Result{Text: out, Structured: map[string]any{"output": out}}
	r = tools.Shape(r, tools.HabitsFor("claude-code"), 30000)
	assert.Equal(t, out, r.Structured["output"], "a client that shows only structuredContent keeps it whole")

	r = &tools.Result{Text: out, Structured: map[string]any{"output": out}}
	r = tools.Shape(r, tools.HabitsFor("codex-mcp-client"), 30000)
	assert.Nil(t, r.Structured, "Codex takes text alone, which reaches its model verbatim")
	assert.Equal(t, out, r.Text)
}

// TestShapeCutsToStructuredBudget: for Claude Code the budget counts the
// JSON-serialised structuredContent (escapes included); the cut is in the
// middle, at line boundaries, said in a line, and the same in the text.
func TestShapeCutsToStructuredBudget(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "row %d\t\"quoted\" \\ back\n", i)
	}
	out := b.String()
	r := &tools.Result{Text: out, Structured: map[string]any{"output": out, "truncated": false, "exit_code": 0}}
	claude := tools.HabitsFor("claude-code")
	budget := 11000
	r = tools.Shape(r, claude, budget)
	js, err := json.Marshal(r.Structured)
	require.NoError(t, err)
	assert.LessOrEqual(t, utf8.RuneCount(js), budget)
	got := r.Structured["output"].(string)
	assert.Equal(t, got, r.Text)
	assert.True(t, strings.HasPrefix(got, "row 0\t"))
	assert.True(t, strings.HasSuffix(got, "row 1999\t\"quoted\" \\ back\n"))
	assert.Regexp(t, `\n\[output truncated: \d+ characters cut from the middle\]\nrow \d+\t`, got)
	assert.Equal(t, true, r.Structured["truncated"])
}
