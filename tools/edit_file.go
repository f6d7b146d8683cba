package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cordonhq/cordon/sessionlog"
	"github.com/pmezard/go-difflib/difflib"
)

// EditFileInput are the edit_file tool's arguments.
type EditFileInput struct {
	Path       string `json:"path" jsonschema:"File to edit."`
	OldString  string `json:"old_string" jsonschema:"Exact text to replace."`
	NewString  string `json:"new_string" jsonschema:"Replacement text."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence. Default false."`
	// A pointer: 0 is refused, not taken for "absent".
	ExpectedReplacements *int `json:"expected_replacements,omitempty" jsonschema:"How many occurrences of old_string to replace, all of them: the edit fails, changing nothing, unless old_string occurs exactly this many times. Default: once, or with replace_all every occurrence." schema:"minimum=1,maximum=MaxInt32"`
	Escalation
}

// EditFileOutput is the edit_file tool's structuredContent.
type EditFileOutput struct {
	Path         string `json:"path"`
	Replacements int    `json:"replacements"`
	Diff         string `json:"diff" jsonschema:"the unified diff of the change, as in the text"`
}

// diffContext is the number of unchanged lines around each hunk.
const diffContext = 3

// maxDiffLines bounds the lines handed to the diff algorithm (quadratic at
// worst); a bigger change is summarised instead.
const maxDiffLines = 20000

// EditFile replaces old_string with new_string, atomically, through one
// resolution of the path by the fence (the file read is the file
// replaced), and returns the unified diff: once, every occurrence with
// replace_all, or exactly expected_replacements of them. On any error the
// file is left as it was.
func (tb *Toolbox) EditFile(ctx context.Context, call Call, in EditFileInput) (*Result, *ToolError) {
	call = tb.pin(call)
	if in.OldString == "" {
		return nil, invalid("old_string is empty: give the exact text to replace (use write_file to create or overwrite a whole file)")
	}
	if in.OldString == in.NewString {
		return nil, invalid("old_string and new_string are the same: there is nothing to change")
	}
	expected := 0 // any number with replace_all, else 1
	if in.ExpectedReplacements != nil {
		if expected = *in.ExpectedReplacements; expected < 1 {
			return nil, invalid("expected_replacements must be at least 1 (it is %d): it is how many occurrences of old_string the edit replaces", expected)
		}
	}
	fields := map[string]any{"replace_all": in.ReplaceAll}
	if expected > 0 {
		fields["expected_replacements"] = expected
	}
	path, pol, f, terr := tb.prepareWrite(ctx, call, NameEditFile, in.Path, in.SandboxPermissions, in.Justification, fields)
	if terr != nil {
		return nil, terr
	}
	var before, after []byte
	var replacements int
	old := []byte(in.OldString)
	_, err := f.Edit(path, func(content []byte) ([]byte, error) {
		n := bytes.Count(content, old)
		switch {
		case n == 0 && expected > 0:
			return nil, &editRefusal{invalid("old_string not found in %s (expected_replacements is %d, found 0); nothing was changed%s",
				path, expected, notFoundHint(content, in.OldString))}
		case n == 0:
			return nil, &editRefusal{invalid("old_string not found in %s%s", path, notFoundHint(content, in.OldString))}
		case expected > 0 && n != expected:
			return nil, &editRefusal{invalid(
				"old_string appears %d times in %s (at lines %s), but expected_replacements is %d; nothing was changed: read the file again, then set expected_replacements to the number you mean to replace, or change old_string",
				n, path, occurrenceLines(content, old, 10), expected)}
		case n > 1 && expected == 0 && !in.ReplaceAll:
			return nil, &editRefusal{invalid(
				"old_string appears %d times in %s (at lines %s): add surrounding lines to old_string so that it matches once, or set replace_all to true to replace every occurrence",
				n, path, occurrenceLines(content, old, 10))}
		}
		replacements = 1
		if in.ReplaceAll || expected > 0 {
			replacements = n
		}
		before, after = content, bytes.Replace(content, old, []byte(in.NewString), replacements)
		return after, nil
	})
	if err != nil {
		var refusal *editRefusal
		if !errors.As(err, &refusal) {
			refusal = &editRefusal{fenceError(NameEditFile, pol, path, err)}
		}
		call.Session.record(call.conf().Logger, sessionlog.EventToolResult, map[string]any{"tool": NameEditFile, "path": path, "error": refusal.terr.Code})
		return nil, refusal.terr
	}
	call.Session.record(call.conf().Logger, sessionlog.EventToolResult, map[string]any{"tool": NameEditFile, "path": path, "replacements": replacements})
	diff := unifiedDiff(displayPath(pol, path), before, after)
	if limit := call.conf().MaxOutput; limit > 0 && len(diff) > limit {
		diff = diff[:limit] + fmt.Sprintf("\n[diff cut at %d of %d bytes; the edit was applied in full: read_file shows the result]\n", limit, len(diff))
	}
	// The diff goes in both: Claude Code and Codex show the model the
	// structuredContent instead of the text.
	return &Result{Text: diff, Structured: structured(EditFileOutput{Path: path, Replacements: replacements, Diff: diff})}, nil
}

// editRefusal carries a tool error out of the fence's Edit callback, which
// returns the callback's error as is and writes nothing.
type editRefusal struct{ terr *ToolError }

func (e *editRefusal) Error() string { return e.terr.Error() }

// occurrenceLines lists the line numbers of the first few occurrences.
func occurrenceLines(content, old []byte, most int) string {
	var lines []string
	line, last := 1, 0
	for i := 0; len(lines) < most; {
		j := bytes.Index(content[i:], old)
		if j < 0 {
			break
		}
		line += bytes.Count(content[last:i+j], []byte{'\n'})
		last = i + j
		lines = append(lines, strconv.Itoa(line))
		i += j + len(old)
	}
	if n := bytes.Count(content, old); n > len(lines) {
		lines = append(lines, "…")
	}
	return strings.Join(lines, ", ")
}

// lineNumberPrefix matches read_file's `cat -n` prefix, which models
// sometimes copy into old_string.
var lineNumberPrefix = regexp.MustCompile(`(?m)^ *\d+\t`)

// maxHintLines bounds the fuzzy search for the closest line.
const maxHintLines = 50000

// notFoundHint says why old_string may have missed: the usual causes, or
// the line that comes closest.
func notFoundHint(content []byte, old string) string {
	const tail = "; read_file shows the current content: copy old_string exactly, including whitespace and line breaks"
	text := string(content)
	switch {
	case strings.Contains(old, "\n") && !strings.Contains(old, "\r\n") && strings.Contains(text, "\r\n") &&
		strings.Contains(text, strings.ReplaceAll(old, "\n", "\r\n")):
		return ". The file has CRLF line endings: old_string must use \\r\\n between lines too"
	case lineNumberPrefix.MatchString(old) && strings.Contains(text, lineNumberPrefix.ReplaceAllString(old, "")):
		return ". old_string includes read_file's line-number prefixes (the number and tab at the start of each line): leave them out"
	}
	first := ""
	for _, l := range strings.Split(old, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			first = t
			break
		}
	}
	if first == "" {
		return tail
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == first {
			return fmt.Sprintf(". Line %d matches the first line of old_string up to indentation: %q; check the whitespace and the lines after it%s", i+1, cutRunes(l, 200), tail)
		}
	}
	if len(lines) > maxHintLines {
		return tail
	}
	best, bestRatio := -1, 0.6
	m := difflib.NewMatcher(nil, nil)
	m.SetSeq2(splitChars(first))
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		m.SetSeq1(splitChars(t))
		if m.RealQuickRatio() <= bestRatio || m.QuickRatio() <= bestRatio {
			continue
		}
		if r := m.Ratio(); r > bestRatio {
			best, bestRatio = i, r
		}
	}
	if best >= 0 {
		return fmt.Sprintf(". The closest line is %d: %q%s", best+1, cutRunes(lines[best], 200), tail)
	}
	return tail
}

// splitChars splits a string into characters for difflib's matcher.
func splitChars(s string) []string {
	out := make([]string, 0, len(s))
	for _, r := range s {
		out = append(out, string(r))
	}
	return out
}

// cutRunes shortens s to at most n characters, marking the cut.
func cutRunes(s string, n int) string {
	count := 0
	for i := range s {
		if count == n {
			return s[:i] + "…"
		}
		count++
	}
	return s
}

// unifiedDiff is `diff -u` of two versions of a file, with git's a/ and b/
// prefixes. Only the changed region, with its context, goes through the
// diff algorithm: an edit of a large file stays cheap.
func unifiedDiff(name string, a, b []byte) string {
	al, bl := splitLines(a), splitLines(b)
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	start := max(0, pre-diffContext)
	endA, endB := len(al)-max(0, suf-diffContext), len(bl)-max(0, suf-diffContext)
	name = strings.TrimPrefix(name, "/")
	if endA-start > maxDiffLines || endB-start > maxDiffLines {
		return fmt.Sprintf("--- a/%s\n+++ b/%s\n[the change spans lines %d-%d (now %d-%d): too large to show as a diff; read_file shows the result]\n",
			name, name, pre+1, len(al)-suf, pre+1, len(bl)-suf)
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: al[start:endA], B: bl[start:endB],
		FromFile: "a/" + name, ToFile: "b/" + name, Context: diffContext,
	})
	if err != nil {
		return fmt.Sprintf("(no diff: %v)", err)
	}
	if start == 0 {
		return text
	}
	// The hunks were computed on a window of the file: shift their line
	// numbers back to the file's own.
	return hunkHeader.ReplaceAllStringFunc(text, func(h string) string {
		m := hunkHeader.FindStringSubmatch(h)
		return fmt.Sprintf("@@ -%s +%s @@", shiftRange(m[1], start), shiftRange(m[2], start))
	})
}

var hunkHeader = regexp.MustCompile(`(?m)^@@ -(\d+(?:,\d+)?) \+(\d+(?:,\d+)?) @@`)

func shiftRange(r string, by int) string {
	first, rest, _ := strings.Cut(r, ",")
	n, _ := strconv.Atoi(first)
	out := strconv.Itoa(n + by)
	if rest != "" {
		out += "," + rest
	}
	return out
}

// splitLines splits after each newline, without the phantom empty line
// that difflib.SplitLines adds. A last line without a newline carries
// diff's own marker, so that adding or removing the final newline shows.
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] += "\n\\ No newline at end of file\n"
	}
	return lines
}
