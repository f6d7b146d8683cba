package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Delivery is what of a tool result a client hands its model.
type Delivery string

const (
	// DeliversText: the text content only.
	DeliversText Delivery = "text"
	// DeliversStructured: the structuredContent, JSON-serialised, instead
	// of the text whenever it is present; the text otherwise.
	DeliversStructured Delivery = "structured"
	// DeliversBoth: the text and the structuredContent, one after the
	// other, so whatever is in both reaches the model twice.
	DeliversBoth Delivery = "both"
)

// ClientHabits is what cordon knows of one MCP client: what reaches its
// model and how much of one result it passes on. Each entry was measured
// with the real client named in MeasuredWith, against a stand-in of its
// model API (mcpserver/e2e_agent_*_test.go); an update that changes what
// the model receives fails those tests.
type ClientHabits struct {
	// Name is the client's clientInfo.name in initialize.
	Name     string
	Delivers Delivery
	// Budget is how many characters of one result the client passes on
	// whole (counted as the model gets them: JSON-serialised for
	// structuredContent). cordon cuts its results to it itself, at a line
	// boundary and saying how to get the rest, so the model never gets a
	// hole it was not told about.
	Budget int
	// TextWithoutSchema: the client takes a result without
	// structuredContent from a tool that declares an output schema (Codex
	// does; Claude Code reports "Tool X has an output schema but did not
	// return structured content" to the model instead). cordon then sends
	// such a client text only, so that output, diffs and matches reach
	// its model verbatim rather than JSON-escaped.
	TextWithoutSchema bool
	// Instructions: the client shows its model the instructions of
	// initialize. One that does not gets them once, at the head of the
	// first result they fit in (mcpserver), so its model still learns its
	// mode and how to ask for more.
	Instructions bool
	// Roots is how the client answers roots/list.
	Roots        string
	MeasuredWith string
}

// DefaultClient is the safe default for a client not in the table: the
// 30,000-character budget, and both the text and the structuredContent
// sent, because cordon cannot know which of them the model sees.
// An unknown client is taken to show the instructions, as MCP asks.
var DefaultClient = ClientHabits{Delivers: "", Budget: DefaultMaxOutput, Instructions: true, Roots: "unknown", MeasuredWith: "(default)"}

// clientTable is the clients cordon is tested with, keyed by clientInfo.name.
var clientTable = []ClientHabits{
	// Claude Code caps a result at MAX_MCP_OUTPUT_TOKENS (25,000 tokens by
	// default): 60,000 characters stays inside it even at 2.4 characters
	// a token (dense code, JSON escapes).
	{Name: "claude-code", Delivers: DeliversStructured, Budget: 60000, Instructions: true, Roots: "declares none", MeasuredWith: "@anthropic-ai/claude-code 2.1.332"},
	// Codex keeps about 12,000 characters of a result and drops the middle
	// (a 2,000-line read_file page lost lines 548-1508 unannounced):
	// cordon cuts below that itself, leaving room for Codex's own framing.
	{Name: "codex-mcp-client", Delivers: DeliversStructured, Budget: 11000, TextWithoutSchema: true, Instructions: true, Roots: "declares none", MeasuredWith: "@openai/codex 0.171.0"},
	// Qwen Code passes both: a 30,000-character bash output became ~64 KB
	// and was replaced by "Output too large". cordon sends the big fields
	// in the text only.
	// Qwen Code names itself qwen-cli-mcp-client-SERVER, and persists a
	// result over 25,000 characters to a file, showing the model a
	// 2,000-character preview.
	// Neither Qwen Code nor Gemini CLI shows the model the instructions.
	{Name: "qwen-cli-mcp-client", Delivers: DeliversBoth, Budget: 24000, Roots: "its own working directory", MeasuredWith: "@qwen-code/qwen-code 0.24.4"},
	{Name: "gemini-cli-mcp-client", Delivers: DeliversText, Budget: 30000, Roots: "its own working directory", MeasuredWith: "@google/gemini-cli 0.61.0"},
	{Name: "opencode", Delivers: DeliversText, Budget: 30000, Instructions: true, Roots: "its own working directory", MeasuredWith: "opencode-ai 1.18.33"},
}

// HabitsFor returns the table's entry for a clientInfo.name, or
// DefaultClient. A name may carry a suffix after a dash (Qwen Code adds
// the server's name: qwen-cli-mcp-client-cordon).
func HabitsFor(name string) ClientHabits {
	for _, h := range clientTable {
		if h.Name == name || strings.HasPrefix(name, h.Name+"-") {
			return h
		}
	}
	d := DefaultClient
	d.Name = name
	return d
}

// ClientTable returns the table, for documentation and `cordon status`.
func ClientTable() []ClientHabits { return append([]ClientHabits(nil), clientTable...) }

// budget is the characters one result of this call may take: the
// client's, or the configured bash.max_output_chars when it was changed
// from the default (the human's word beats the table).
func (c Call) budget() int {
	if m := c.conf().MaxOutput; m > 0 && m != DefaultMaxOutput {
		return m
	}
	if c.Session != nil {
		if b := c.Session.Client().Budget; b > 0 {
			return b
		}
	}
	return DefaultMaxOutput
}

// Fit shapes a call's result for the session's client (Shape).
func (tb *Toolbox) Fit(call Call, r *Result) *Result {
	call = tb.pin(call)
	return Shape(r, call.Session.Client(), call.budget())
}

// Room is how many more characters the model of the call's client may
// get in r, after Fit, within the result budget.
func (tb *Toolbox) Room(call Call, r *Result) int {
	call = tb.pin(call)
	return call.budget() - visibleSize(r, call.Session.Client())
}

// outputCap is the most characters of command output one result carries:
// the client's budget where it is smaller than the configured cap.
func (c Call) outputCap() int {
	return min(c.budget(), c.conf().MaxOutput)
}

// duplicatedFields are the structuredContent fields that repeat what the
// text already carries whole: a client that passes both gets them once.
var duplicatedFields = []string{"output", "diff", "matches", "entries"}

// Shape fits a result to what the client passes on: for a client that
// passes both text and structuredContent, the fields the text carries are
// left out of structuredContent (its schema requires none of them); a
// client that shows only structuredContent but takes a result without it
// gets the text alone, verbatim (errors keep theirs: denied, the code); a
// result over the client's budget has the middle of its big field cut at
// line boundaries, with a line saying so. read_file cuts its own pages
// (its footer must name the true next offset).
func Shape(r *Result, h ClientHabits, budget int) *Result {
	if r == nil {
		return r
	}
	if h.Delivers == DeliversBoth && r.Structured != nil {
		st := make(map[string]any, len(r.Structured))
		for k, v := range r.Structured {
			st[k] = v
		}
		for _, k := range duplicatedFields {
			delete(st, k)
		}
		r.Structured = st
	}
	if h.Delivers == DeliversStructured && h.TextWithoutSchema && r.Structured != nil && !r.IsError {
		r.Structured = nil
	}
	if h.Delivers == "" {
		// An unknown client: the bash output cap and read_file's page
		// cut hold it to the default budget already.
		return r
	}
	for range 4 {
		over := visibleSize(r, h) - budget
		if over <= 0 {
			break
		}
		if !cutBigField(r, h, over) {
			break
		}
	}
	return r
}

// visibleSize is how many characters of r the client's model gets.
func visibleSize(r *Result, h ClientHabits) int {
	text := utf8.RuneCountInString(r.Text)
	if r.Structured == nil {
		return text
	}
	js, _ := json.Marshal(r.Structured)
	switch h.Delivers {
	case DeliversStructured:
		return utf8.RuneCount(js)
	case DeliversText:
		return text
	case DeliversBoth:
		return text + utf8.RuneCount(js)
	}
	return max(text, utf8.RuneCount(js))
}

// cutBigField cuts the middle of the result's output or diff, in the
// text and in structuredContent alike, by at least over characters as
// the model sees them.
func cutBigField(r *Result, h ClientHabits, over int) bool {
	for _, k := range []string{"output", "diff"} {
		s, ok := r.Structured[k].(string)
		if !ok || s == "" || !strings.Contains(r.Text, s) {
			continue
		}
		cost := func(part string) int { return utf8.RuneCountInString(part) }
		if h.Delivers == DeliversStructured {
			cost = func(part string) int { js, _ := json.Marshal(part); return utf8.RuneCount(js) - 2 }
		}
		cut, ok := cutMiddle(s, over+len(outputCutLine)+16, cost)
		if !ok {
			return false
		}
		r.Text = strings.Replace(r.Text, s, cut, 1)
		r.Structured[k] = cut
		if _, has := r.Structured["truncated"]; has {
			r.Structured["truncated"] = true
		}
		return true
	}
	if r.Structured == nil || h.Delivers != DeliversStructured {
		// Text only, or text carried: cut the text itself.
		cut, ok := cutMiddle(r.Text, over+len(outputCutLine)+16, func(p string) int { return utf8.RuneCountInString(p) })
		if ok {
			r.Text = cut
		}
		return ok
	}
	return false
}

// cutMiddle removes whole lines from the middle of s whose cost adds up
// to at least need, and puts the cut line in their place.
func cutMiddle(s string, need int, cost func(string) int) (string, bool) {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) < 3 {
		return s, false
	}
	lo, hi := len(lines)/2, len(lines)/2 // [lo, hi) is cut
	removed, chars := 0, 0
	for removed < need && (lo > 1 || hi < len(lines)-1) {
		if hi < len(lines)-1 && (hi-len(lines)/2 <= len(lines)/2-lo || lo <= 1) {
			removed += cost(lines[hi])
			chars += utf8.RuneCountInString(lines[hi])
			hi++
		} else {
			lo--
			removed += cost(lines[lo])
			chars += utf8.RuneCountInString(lines[lo])
		}
	}
	if removed < need {
		return s, false
	}
	unit := "characters"
	if chars == 1 {
		unit = "character"
	}
	return strings.Join(lines[:lo], "") + fmt.Sprintf(outputCutLine, chars, unit) + "\n" + strings.Join(lines[hi:], ""), true
}
