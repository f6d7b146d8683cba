package tools_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func grepMatches(t testing.TB, w *filesWorld, in tools.GrepInput) ([]string, bool) {
	t.Helper()
	res, terr := w.tb.Grep(bg, w.call, in)
	require.Nil(t, terr, "%+v", in)
	return res.Structured["matches"].([]string), res.Structured["truncated"].(bool)
}

func TestGrep(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "main.go", "package main\n\nfunc main() {\n\tprintln(\"Hello\")\n}\n")
	w.file(t, "pkg/util.go", "package pkg\n\n// hello is lower case\nfunc hello() {}\n")
	w.file(t, "pkg/util_test.go", "package pkg\n// hello test\n")
	w.file(t, "README.md", "Say hello.\r\nhello again\n")
	w.file(t, "a.b/c.txt", "hello from a dotted dir\n") // sorts after "a/" in a walk, before it as a string
	w.file(t, "a/z.txt", "hello from a\n")
	w.file(t, "bin/tool", "hello\x00binary")
	w.file(t, ".git/HEAD", "hello: refs/heads/main\n")
	w.file(t, ".gitignore", "*.log\nvendor/\n")
	w.file(t, "debug.log", "hello log\n")
	w.file(t, "vendor/lib.go", "// hello vendor\n")
	w.file(t, "empty.txt", "")

	tests := []struct {
		name string
		in   tools.GrepInput
		want []string
	}{
		{"basics, in path order", tools.GrepInput{Pattern: "hello"}, []string{
			"README.md:1:Say hello.", "README.md:2:hello again", "a/z.txt:1:hello from a", "a.b/c.txt:1:hello from a dotted dir",
			"pkg/util.go:3:// hello is lower case", "pkg/util.go:4:func hello() {}", "pkg/util_test.go:2:// hello test"}},
		{"ignore case", tools.GrepInput{Pattern: "HELLO\\b", IgnoreCase: true, Glob: "*.go"}, []string{
			`main.go:4:	println("Hello")`, "pkg/util.go:3:// hello is lower case", "pkg/util.go:4:func hello() {}", "pkg/util_test.go:2:// hello test"}},
		{"glob on names", tools.GrepInput{Pattern: "hello", Glob: "*_test.go"}, []string{"pkg/util_test.go:2:// hello test"}},
		{"glob with a slash is on the path", tools.GrepInput{Pattern: "hello", Glob: "pkg/*.go"}, []string{
			"pkg/util.go:3:// hello is lower case", "pkg/util.go:4:func hello() {}", "pkg/util_test.go:2:// hello test"}},
		{"subdirectory", tools.GrepInput{Pattern: "^func", Path: "pkg"}, []string{"pkg/util.go:4:func hello() {}"}},
		{"one file, even if ignored", tools.GrepInput{Pattern: "hello", Path: "debug.log"}, []string{"debug.log:1:hello log"}},
		{"line anchors", tools.GrepInput{Pattern: "^hello|lower case$"}, []string{"README.md:2:hello again", "a/z.txt:1:hello from a",
			"a.b/c.txt:1:hello from a dotted dir", "pkg/util.go:3:// hello is lower case"}},
		{"empty lines", tools.GrepInput{Pattern: "^$", Glob: "*.go"}, []string{"main.go:2:", "pkg/util.go:2:"}},
		{"text anchors mean the line", tools.GrepInput{Pattern: `\Apackage \w+\z`}, []string{"main.go:1:package main", "pkg/util.go:1:package pkg", "pkg/util_test.go:1:package pkg"}},
		{"a match must fit in a line", tools.GrepInput{Pattern: `main\s+func`}, []string{}},
		{"no match", tools.GrepInput{Pattern: "goodbye"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, truncated := grepMatches(t, w, tt.in)
			assert.Equal(t, tt.want, got)
			assert.False(t, truncated)
		})
	}

	res, terr := w.tb.Grep(bg, w.call, tools.GrepInput{Pattern: "hello", Path: "pkg/util.go"})
	require.Nil(t, terr)
	assert.Equal(t, "pkg/util.go:3:// hello is lower case\npkg/util.go:4:func hello() {}\n", res.Text)

	got, _ := grepMatches(t, w, tools.GrepInput{Pattern: "outside", Path: w.outside})
	assert.Equal(t, []string{filepath.Join(w.outside, "file.txt") + ":1:outside"}, got, "outside the workspace, paths are absolute")

	for _, in := range []tools.GrepInput{{Pattern: ""}, {Pattern: "a(b"}, {Pattern: "a", MaxResults: -1}, {Pattern: "a", MaxResults: 10001},
		{Pattern: "a", Glob: "[x"}, {Pattern: "a\x00"}, {Pattern: "a", Path: "x\x00"}} {
		_, terr := w.tb.Grep(bg, w.call, in)
		requireFileCode(t, terr, tools.CodeInvalidArgument)
	}
	_, terr = w.tb.Grep(bg, w.call, tools.GrepInput{Pattern: "a(b"})
	assert.Contains(t, terr.Message, "missing closing )")
	_, terr = w.tb.Grep(bg, w.call, tools.GrepInput{Pattern: "a", Path: "missing"})
	requireFileCode(t, terr, tools.CodeNotFound)

	cancelled, cancel := context.WithCancel(bg)
	cancel()
	_, terr = w.tb.Grep(cancelled, w.call, tools.GrepInput{Pattern: "hello"})
	requireFileCode(t, terr, tools.CodeTimeout)
}

// TestGrepLiteral: with literal, the pattern is a plain string: what RE2
// would read as syntax matches itself, and ignore_case still applies.
func TestGrepLiteral(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "calc.go", "x := f(a.b)\ny := f(aXb)\nz := F(A.B)\n^x $ \\d+\n")

	tests := []struct {
		name string
		in   tools.GrepInput
		want []string
	}{
		{"parentheses and dots are themselves", tools.GrepInput{Pattern: "f(a.b)", Literal: true}, []string{"calc.go:1:x := f(a.b)"}},
		{"the same pattern as RE2", tools.GrepInput{Pattern: "f(a.b)"}, []string{}},
		{"a dot as RE2 is any character", tools.GrepInput{Pattern: "a.b"}, []string{"calc.go:1:x := f(a.b)", "calc.go:2:y := f(aXb)"}},
		{"a dot as a string is a dot", tools.GrepInput{Pattern: "a.b", Literal: true}, []string{"calc.go:1:x := f(a.b)"}},
		{"ignore case", tools.GrepInput{Pattern: "f(a.b)", Literal: true, IgnoreCase: true}, []string{"calc.go:1:x := f(a.b)", "calc.go:3:z := F(A.B)"}},
		{"anchors and classes are characters", tools.GrepInput{Pattern: `^x $ \d+`, Literal: true}, []string{`calc.go:4:^x $ \d+`}},
		{"an unbalanced parenthesis is fine", tools.GrepInput{Pattern: "f(a", Literal: true}, []string{"calc.go:1:x := f(a.b)", "calc.go:2:y := f(aXb)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, truncated := grepMatches(t, w, tt.in)
			assert.Equal(t, tt.want, got)
			assert.False(t, truncated)
		})
	}
	_, terr := w.tb.Grep(bg, w.call, tools.GrepInput{Pattern: "f(a"})
	requireFileCode(t, terr, tools.CodeInvalidArgument)

	res, terr := toolNamed(t, "grep").Run(bg, w.tb, w.call, map[string]any{"pattern": "f(a.b)", "literal": true})
	require.Nil(t, terr, "literal is an argument of the grep tool")
	assert.Equal(t, "calc.go:1:x := f(a.b)\n", res.Text)
	assert.Equal(t, "boolean", toolNamed(t, "grep").InputSchema().Properties["literal"].Type)
}

// TestGrepContext: context shows the lines around each match as grep -C
// does: context lines are file-line-text, -- stands between groups that
// are not adjacent (in one file or across files), and a line is shown once
// however many matches it is near.
func TestGrepContext(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "a.txt", "alpha\nbeta\nmatch one\ngamma\ndelta\nepsilon\nzeta\nmatch two\neta\nmatch three\ntheta\n")
	w.file(t, "b.txt", "match at the top\nafter\nand more\n")
	w.file(t, "crlf.txt", "before\r\nmatch crlf\r\nafter\r\n")
	w.file(t, "long.txt", strings.Repeat("é", tools.MaxMatchChars+10)+"\nmatch long\n")

	tests := []struct {
		name string
		in   tools.GrepInput
		want []string
	}{
		{"one line around", tools.GrepInput{Pattern: "match", Glob: "[ab].txt", Context: 1}, []string{
			"a.txt-2-beta", "a.txt:3:match one", "a.txt-4-gamma",
			"--",
			"a.txt-7-zeta", "a.txt:8:match two", "a.txt-9-eta", "a.txt:10:match three", "a.txt-11-theta",
			"--",
			"b.txt:1:match at the top", "b.txt-2-after"}},
		{"groups that meet merge", tools.GrepInput{Pattern: "match", Path: "a.txt", Context: 2}, []string{
			"a.txt-1-alpha", "a.txt-2-beta", "a.txt:3:match one", "a.txt-4-gamma", "a.txt-5-delta",
			"a.txt-6-epsilon", "a.txt-7-zeta", "a.txt:8:match two", "a.txt-9-eta", "a.txt:10:match three", "a.txt-11-theta"}},
		{"more context than the file has", tools.GrepInput{Pattern: "top", Path: "b.txt", Context: 10}, []string{
			"b.txt:1:match at the top", "b.txt-2-after", "b.txt-3-and more"}},
		{"no context, no separators", tools.GrepInput{Pattern: "match (one|two)"}, []string{"a.txt:3:match one", "a.txt:8:match two"}},
		{"CR is dropped from context lines too", tools.GrepInput{Pattern: "crlf", Context: 1}, []string{
			"crlf.txt-1-before", "crlf.txt:2:match crlf", "crlf.txt-3-after"}},
		{"long context lines are cut", tools.GrepInput{Pattern: "long", Context: 1}, []string{
			"long.txt-1-" + strings.Repeat("é", tools.MaxMatchChars) + "…", "long.txt:2:match long"}},
		{"max_results counts matches, not context", tools.GrepInput{Pattern: "match", Context: 1, MaxResults: 2}, []string{
			"a.txt-2-beta", "a.txt:3:match one", "a.txt-4-gamma",
			"--",
			"a.txt-7-zeta", "a.txt:8:match two", "a.txt-9-eta"}},
		{"cut short at a file boundary", tools.GrepInput{Pattern: "match (three|crlf)", Context: 1, MaxResults: 1}, []string{
			"a.txt-9-eta", "a.txt:10:match three", "a.txt-11-theta"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := grepMatches(t, w, tt.in)
			assert.Equal(t, tt.want, got)
		})
	}
	res, terr := w.tb.Grep(bg, w.call, tools.GrepInput{Pattern: "match (one|two)", Path: "a.txt", Context: 1, MaxResults: 1})
	require.Nil(t, terr)
	assert.Equal(t, "a.txt-2-beta\na.txt:3:match one\na.txt-4-gamma\n[showing the first 1 matches: narrow the pattern, path or glob, or raise max_results (up to 10000)]\n", res.Text)
	assert.Equal(t, true, res.Structured["truncated"])
	assert.Equal(t, "[showing the first 1 matches: narrow the pattern, path or glob, or raise max_results (up to 10000)]", res.Structured["note"],
		"structuredContent says what the text says (Claude Code and Codex show only it)")

	res, terr = w.tb.Grep(bg, w.call, tools.GrepInput{Pattern: "no such line anywhere", Path: "a.txt"})
	require.Nil(t, terr)
	assert.Contains(t, res.Text, "No matches for no such line anywhere in")
	assert.Equal(t, strings.TrimSuffix(res.Text, "\n"), res.Structured["note"])
}

// TestGrepOutput: output files lists the files that match, output count
// their numbers of matching lines; max_results then counts files.
func TestGrepOutput(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "a.txt", "hit\nmiss\nhit hit\n")
	w.file(t, "b/c.txt", "hit\n")
	w.file(t, "d.txt", "miss\n")
	w.file(t, "e.bin", "hit\x00")
	for _, tt := range []struct {
		in   tools.GrepInput
		want []string
	}{
		{tools.GrepInput{Pattern: "hit", Output: "files"}, []string{"a.txt", "b/c.txt"}},
		{tools.GrepInput{Pattern: "hit", Output: "count"}, []string{"a.txt:2", "b/c.txt:1"}},
		{tools.GrepInput{Pattern: "hit", Output: "content"}, []string{"a.txt:1:hit", "a.txt:3:hit hit", "b/c.txt:1:hit"}},
		{tools.GrepInput{Pattern: "HIT", IgnoreCase: true, Output: "count", Path: "a.txt"}, []string{"a.txt:2"}},
		{tools.GrepInput{Pattern: "nothing", Output: "files"}, []string{}},
		{tools.GrepInput{Pattern: "nothing", Output: "count"}, []string{}},
	} {
		got, truncated := grepMatches(t, w, tt.in)
		assert.Equal(t, tt.want, got, "%+v", tt.in)
		assert.False(t, truncated)
	}

	for i := range 30 {
		w.file(t, fmt.Sprintf("many/f%02d.txt", i), "hit\nhit\n")
	}
	got, truncated := grepMatches(t, w, tools.GrepInput{Pattern: "hit", Path: "many", Output: "count", MaxResults: 3})
	assert.Equal(t, []string{"many/f00.txt:2", "many/f01.txt:2", "many/f02.txt:2"}, got, "max_results counts files; each count is whole")
	assert.True(t, truncated)
	res, terr := w.tb.Grep(bg, w.call, tools.GrepInput{Pattern: "hit", Path: "many", Output: "files", MaxResults: 2})
	require.Nil(t, terr)
	assert.Equal(t, "many/f00.txt\nmany/f01.txt\n[showing the first 2 files: narrow the pattern, path or glob, or raise max_results (up to 10000)]\n", res.Text)
}

// TestGrepBadArguments: a bad context or output is refused, naming the
// argument and what it may be.
func TestGrepBadArguments(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "a.txt", "hit\n")
	for _, tt := range []struct {
		in   tools.GrepInput
		want string
	}{
		{tools.GrepInput{Pattern: "hit", Context: -1}, "context must be between 0 and 10, not -1"},
		{tools.GrepInput{Pattern: "hit", Context: 11}, "context must be between 0 and 10, not 11"},
		{tools.GrepInput{Pattern: "hit", Output: "lines"}, `output must be content, files or count, not "lines"`},
		{tools.GrepInput{Pattern: "hit", Output: "FILES"}, `output must be content, files or count, not "FILES"`},
		{tools.GrepInput{Pattern: "hit", Output: "files", Context: 2}, "output files does not show"},
		{tools.GrepInput{Pattern: "hit", Output: "count", Context: 1}, "output count does not show"},
	} {
		_, terr := w.tb.Grep(bg, w.call, tt.in)
		requireFileCode(t, terr, tools.CodeInvalidArgument)
		assert.Contains(t, terr.Message, tt.want)
	}
	grep := toolNamed(t, "grep")
	_, terr := grep.Run(bg, w.tb, w.call, map[string]any{"pattern": "hit", "output": 3})
	requireFileCode(t, terr, tools.CodeInvalidArgument)
	assert.Equal(t, `grep: argument "output" must be a string, not number`, terr.Message)
	_, terr = grep.Run(bg, w.tb, w.call, map[string]any{"pattern": "hit", "context": "2"})
	requireFileCode(t, terr, tools.CodeInvalidArgument)
	assert.Equal(t, `grep: argument "context" must be an integer, not string`, terr.Message)
	res, terr := grep.Run(bg, w.tb, w.call, map[string]any{"pattern": "hit", "output": "count"})
	require.Nil(t, terr)
	assert.Equal(t, "a.txt:1\n", res.Text)
	assert.Equal(t, []any{"content", "files", "count"}, grep.InputSchema().Properties["output"].Enum)
}

func TestGrepMaxResults(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	var want []string
	for i := range 50 {
		name := fmt.Sprintf("d%02d/f.txt", i)
		w.file(t, name, "match one\nno\nmatch two\n")
		want = append(want, name+":1:match one", name+":3:match two")
	}
	for _, max := range []int{1, 2, 3, 7, 99, 100} {
		for range 5 {
			got, truncated := grepMatches(t, w, tools.GrepInput{Pattern: "match", MaxResults: max})
			require.Equal(t, want[:max], got, "max %d: the first matches in path order, whatever the timing", max)
			require.Equal(t, max < 100, truncated, "max %d", max)
		}
	}
	res, terr := w.tb.Grep(bg, w.call, tools.GrepInput{Pattern: "match", MaxResults: 3})
	require.Nil(t, terr)
	assert.Contains(t, res.Text, "[showing the first 3 matches")
	got, truncated := grepMatches(t, w, tools.GrepInput{Pattern: "match"})
	assert.Len(t, got, 100)
	assert.False(t, truncated)
}

func TestGrepLongLines(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	long := strings.Repeat("a", 5000) + "NEEDLE" + strings.Repeat("b", 5000)
	w.file(t, "min.js", "x\n"+long+"\n")
	got, _ := grepMatches(t, w, tools.GrepInput{Pattern: "NEEDLE"})
	require.Len(t, got, 1)
	assert.True(t, strings.HasPrefix(got[0], "min.js:2:…a"), got[0])
	assert.Contains(t, got[0], "NEEDLE")
	assert.LessOrEqual(t, len([]rune(got[0])), len("min.js:2:")+tools.MaxMatchChars+2)
}

// TestGrepAgainstNaive compares grep with a per-line search on files that
// exercise the buffer: long lines, lines across read boundaries, a line
// longer than the largest buffer, CRLF.
func TestGrepAgainstNaive(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"needle", "hay", "x", "y", " ", "\t", "NEEDLE", "\r", ""}
	var b strings.Builder
	for i := range 30000 {
		n := rng.IntN(12)
		switch i {
		case 1000:
			n = 200000 // longer than the first buffer
		case 2000:
			n = 500000 // longer than the largest buffer: searched in its head
		}
		for range n {
			b.WriteString(words[rng.IntN(len(words))])
		}
		b.WriteByte('\n')
	}
	content := b.String()
	w.file(t, "big.txt", content)
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	for _, pattern := range []string{"needle", "^needle", "needle$", `x\s+y`, "^$", "[^a]needle", `(?i)needle\r`, "y{3}"} {
		t.Run(pattern, func(t *testing.T) {
			re := regexp.MustCompile(pattern)
			var want []string
			for i, l := range lines {
				if len(l) > 1<<20 {
					l = l[:1<<20]
				}
				if re.MatchString(l) {
					want = append(want, fmt.Sprintf("big.txt:%d", i+1))
				}
			}
			got, _ := grepMatches(t, w, tools.GrepInput{Pattern: pattern, MaxResults: tools.MaxGrepResults})
			for i, g := range got {
				parts := strings.SplitN(g, ":", 3)
				got[i] = parts[0] + ":" + parts[1]
			}
			if len(want) > tools.MaxGrepResults {
				want = want[:tools.MaxGrepResults]
			}
			if want == nil {
				want = []string{}
			}
			assert.Equal(t, want, got)
		})
	}
}

// TestGrepReadDeny: grep never reads what the fence refuses, however the
// walk or the path reaches it.
func TestGrepReadDeny(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	require.NoError(t, os.WriteFile(filepath.Join(w.home, ".netrc"), []byte(fileCanary), 0o600))
	require.NoError(t, os.Symlink(w.home, filepath.Join(w.ws, "home")))
	require.NoError(t, os.Symlink(w.canary, filepath.Join(w.ws, "key")))
	w.file(t, "ok.txt", fileCanary+" is quoted here\n")
	for _, in := range []tools.GrepInput{{Path: w.home}, {Path: "home"}, {Path: w.base}, {}} {
		in.Pattern = "SECRET"
		got, _ := grepMatches(t, w, in)
		for _, m := range got {
			assert.True(t, strings.HasPrefix(m, "ok.txt:") || strings.HasPrefix(m, filepath.Join(w.ws, "ok.txt")+":"), "%+v: %s", in, m)
		}
	}
	for _, p := range []string{w.canary, "key", "home/.ssh", filepath.Join(w.home, ".netrc"), filepath.Join(w.state, "http-token")} {
		_, terr := w.tb.Grep(bg, w.call, tools.GrepInput{Pattern: "SECRET", Path: p})
		requireFileDenied(t, terr, sandbox.WorkspaceWrite)
	}
}

// BenchmarkGrep searches a tree of 20,000 small files (2,000 directories,
// a .gitignore) for a literal that is in a few of them.
func BenchmarkGrep(b *testing.B) {
	w := newFilesWorld(b, sandbox.WorkspaceWrite)
	ws := filepath.Join(w.base, "tree")
	line := "func handler(w http.ResponseWriter, r *http.Request) { return nil } // some code\n"
	for d := range 2000 {
		sub := filepath.Join(ws, fmt.Sprintf("pkg%03d", d/100), fmt.Sprintf("mod%04d", d))
		require.NoError(b, os.MkdirAll(sub, 0o755))
		for f := range 10 {
			content := strings.Repeat(line, 40)
			if (d*10+f)%997 == 0 {
				content += "the needle is here\n"
			}
			require.NoError(b, os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%d.go", f)), []byte(content), 0o644))
		}
	}
	require.NoError(b, os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("*.log\nbuild/\n"), 0o644))
	for b.Loop() {
		res, terr := w.tb.Grep(bg, w.call, tools.GrepInput{Pattern: "needle", Path: ws})
		if terr != nil || len(res.Structured["matches"].([]string)) != 21 {
			b.Fatalf("unexpected result: %v %v", terr, res)
		}
	}
}

// TestGrepReleasesDirectories: the walk holds each directory open until
// the last of its files is searched, however the search ends (all found,
// cut short by max_results, cancelled): no handle outlives the call.
func TestGrepReleasesDirectories(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc/self/fd")
	}
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	for d := range 60 {
		for f := range 8 {
			w.file(t, fmt.Sprintf("d%02d/e/f%d.txt", d, f), "match\n")
		}
	}
	openFDs := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		require.NoError(t, err)
		return len(entries)
	}
	before := openFDs()
	for _, max := range []int{1, 7, 100, tools.MaxGrepResults} {
		got, _ := grepMatches(t, w, tools.GrepInput{Pattern: "match", MaxResults: max})
		require.Len(t, got, min(max, 480))
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, terr := w.tb.Grep(ctx, w.call, tools.GrepInput{Pattern: "match"})
	requireFileCode(t, terr, tools.CodeTimeout)
	res, terr := w.tb.Glob(bg, w.call, tools.GlobInput{Pattern: "**/*.txt"})
	require.Nil(t, terr)
	require.Len(t, res.Structured["matches"], 480)
	require.Equal(t, before, openFDs(), "directory handles left open")
}
