package tools_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const goSource = `package main

import "fmt"

func main() {
	fmt.Println("hello")
	fmt.Println("hello")
}
`

func TestEditFile(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	p := w.file(t, "cmd/main.go", goSource)
	require.NoError(t, os.Chmod(p, 0o750))

	res, terr := w.tb.EditFile(bg, w.call, tools.EditFileInput{Path: "cmd/main.go", OldString: `import "fmt"`, NewString: "import (\n\t\"fmt\"\n)"})
	require.Nil(t, terr)
	assert.Equal(t, map[string]any{"path": p, "replacements": 1, "diff": res.Text}, res.Structured,
		"the diff is in structuredContent too: some clients show the model only that")
	assert.Equal(t, `--- a/cmd/main.go
+++ b/cmd/main.go
@@ -1,6 +1,8 @@
 package main
 
-import "fmt"
+import (
+	"fmt"
+)
 
 func main() {
 	fmt.Println("hello")
`, res.Text)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o750), fi.Mode().Perm())

	res, terr = w.tb.EditFile(bg, w.call, tools.EditFileInput{Path: p, OldString: `"hello"`, NewString: `"bye"`, ReplaceAll: true})
	require.Nil(t, terr)
	assert.Equal(t, 2, res.Structured["replacements"])
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, 0, strings.Count(string(got), "hello"))
	assert.Equal(t, 2, strings.Count(string(got), "bye"))
}

func TestEditFileRefusals(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "main.go", goSource)
	w.file(t, "crlf.txt", "one\r\ntwo\r\nthree\r\n")
	tests := []struct {
		name string
		in   tools.EditFileInput
		code string
		msgs []string
	}{
		{"empty old_string", tools.EditFileInput{Path: "main.go", NewString: "x"}, tools.CodeInvalidArgument, []string{"old_string is empty"}},
		{"no change", tools.EditFileInput{Path: "main.go", OldString: "main", NewString: "main"}, tools.CodeInvalidArgument, []string{"the same"}},
		{"missing", tools.EditFileInput{Path: "main.go", OldString: "fmt.Printn(\"hello\")", NewString: "x"}, tools.CodeInvalidArgument,
			[]string{"old_string not found in " + filepath.Join(w.ws, "main.go"), "closest line is 6", `fmt.Println(\"hello\")`}},
		{"indentation differs", tools.EditFileInput{Path: "main.go", OldString: "  fmt.Println(\"hello\")\n  fmt.Println(\"hello\")\n}\n\n", NewString: "x"}, tools.CodeInvalidArgument,
			[]string{"old_string not found", "Line 6 matches the first line of old_string up to indentation"}},
		{"line-number prefixes", tools.EditFileInput{Path: "main.go", OldString: "     5\tfunc main() {\n     6\t\tfmt.Println(\"hello\")", NewString: "x"}, tools.CodeInvalidArgument,
			[]string{"line-number prefix"}},
		{"CRLF", tools.EditFileInput{Path: "crlf.txt", OldString: "one\ntwo", NewString: "x"}, tools.CodeInvalidArgument, []string{"CRLF"}},
		{"ambiguous", tools.EditFileInput{Path: "main.go", OldString: `fmt.Println("hello")`, NewString: "x"}, tools.CodeInvalidArgument,
			[]string{"appears 2 times", "lines 6, 7", "replace_all"}},
		{"missing file", tools.EditFileInput{Path: "nope.go", OldString: "a", NewString: "b"}, tools.CodeNotFound, []string{filepath.Join(w.ws, "nope.go")}},
		{"directory", tools.EditFileInput{Path: ".", OldString: "a", NewString: "b"}, tools.CodeInvalidArgument, nil},
		{"NUL byte", tools.EditFileInput{Path: "main\x00.go", OldString: "a", NewString: "b"}, tools.CodeInvalidArgument, []string{"NUL"}},
	}
	before := snapshotTree(t, w.base)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, terr := w.tb.EditFile(bg, w.call, tt.in)
			require.Nil(t, res)
			requireFileCode(t, terr, tt.code)
			for _, m := range tt.msgs {
				assert.Contains(t, terr.Message, m)
			}
		})
	}
	assert.Equal(t, before, snapshotTree(t, w.base), "a refused edit changes nothing")
}

// TestEditFileExpectedReplacements: with expected_replacements, the edit
// replaces exactly that many occurrences, all there are, or fails naming
// what it found and what was expected, and changes nothing.
func TestEditFileExpectedReplacements(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	p := w.file(t, "main.go", goSource) // fmt.Println("hello") twice, at lines 6 and 7
	hello := `fmt.Println("hello")`
	count := func(n int) *int { return &n }

	refusals := []struct {
		name string
		in   tools.EditFileInput
		msgs []string
	}{
		{"fewer than expected", tools.EditFileInput{Path: "main.go", OldString: hello, NewString: "x", ExpectedReplacements: count(3)},
			[]string{"appears 2 times in " + p, "lines 6, 7", "expected_replacements is 3", "nothing was changed"}},
		{"more than expected", tools.EditFileInput{Path: "main.go", OldString: hello, NewString: "x", ExpectedReplacements: count(1)},
			[]string{"appears 2 times", "expected_replacements is 1", "nothing was changed"}},
		{"replace_all does not lift it", tools.EditFileInput{Path: "main.go", OldString: hello, NewString: "x", ReplaceAll: true, ExpectedReplacements: count(5)},
			[]string{"appears 2 times", "expected_replacements is 5"}},
		{"none found", tools.EditFileInput{Path: "main.go", OldString: "goodbye", NewString: "x", ExpectedReplacements: count(2)},
			[]string{"old_string not found in " + p, "expected_replacements is 2, found 0", "nothing was changed"}},
		{"zero", tools.EditFileInput{Path: "main.go", OldString: hello, NewString: "x", ExpectedReplacements: count(0)},
			[]string{"expected_replacements must be at least 1 (it is 0)"}},
		{"negative", tools.EditFileInput{Path: "main.go", OldString: hello, NewString: "x", ExpectedReplacements: count(-2)},
			[]string{"expected_replacements must be at least 1 (it is -2)"}},
	}
	before := snapshotTree(t, w.base)
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			res, terr := w.tb.EditFile(bg, w.call, tt.in)
			require.Nil(t, res)
			requireFileCode(t, terr, tools.CodeInvalidArgument)
			for _, m := range tt.msgs {
				assert.Contains(t, terr.Message, m)
			}
			assert.Equal(t, before, snapshotTree(t, w.base), "a refused edit changes nothing")
		})
	}
	// Through the table, as a client sends it: a JSON number, or zero.
	_, terr := toolNamed(t, "edit_file").Run(bg, w.tb, w.call, map[string]any{"path": "main.go", "old_string": hello, "new_string": "x", "expected_replacements": 0})
	requireFileCode(t, terr, tools.CodeInvalidArgument)
	assert.Contains(t, terr.Message, "expected_replacements must be at least 1")
	_, terr = toolNamed(t, "edit_file").Run(bg, w.tb, w.call, map[string]any{"path": "main.go", "old_string": hello, "new_string": "x", "expected_replacements": "2"})
	requireFileCode(t, terr, tools.CodeInvalidArgument)
	assert.Equal(t, `edit_file: argument "expected_replacements" must be an integer, not string`, terr.Message)
	assert.Equal(t, before, snapshotTree(t, w.base))
	schema := toolNamed(t, "edit_file").InputSchema().Properties["expected_replacements"]
	assert.Equal(t, "integer", schema.Type)
	assert.Equal(t, float64(1), *schema.Minimum)

	// The right count replaces them all, without replace_all.
	res, terr := toolNamed(t, "edit_file").Run(bg, w.tb, w.call, map[string]any{"path": "main.go", "old_string": hello, "new_string": `fmt.Println("bye")`, "expected_replacements": 2})
	require.Nil(t, terr)
	assert.Equal(t, 2, res.Structured["replacements"])
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, strings.ReplaceAll(goSource, hello, `fmt.Println("bye")`), string(got))

	// One expected, one there: an ordinary edit.
	res, terr = w.tb.EditFile(bg, w.call, tools.EditFileInput{Path: "main.go", OldString: "package main", NewString: "package app", ExpectedReplacements: count(1)})
	require.Nil(t, terr)
	assert.Equal(t, 1, res.Structured["replacements"])
	// With replace_all too, the count must still match.
	res, terr = w.tb.EditFile(bg, w.call, tools.EditFileInput{Path: "main.go", OldString: `"bye"`, NewString: `"hi"`, ReplaceAll: true, ExpectedReplacements: count(2)})
	require.Nil(t, terr)
	assert.Equal(t, 2, res.Structured["replacements"])
}

func TestEditFileDenied(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	cases := deniedWrites(t, w)
	before := snapshotTree(t, w.base)
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			res, terr := w.tb.EditFile(bg, w.call, tools.EditFileInput{Path: p, OldString: "e", NewString: "pwned", ReplaceAll: true})
			require.Nil(t, res)
			requireFileDenied(t, terr, sandbox.WorkspaceWrite)
			assert.Contains(t, terr.Message, "edit_file refused ")
			assert.Contains(t, terr.Message, "call edit_file again with sandbox_permissions=")
		})
	}
	assert.Equal(t, before, snapshotTree(t, w.base), "a refused edit changes nothing")

	ro := newFilesWorld(t, sandbox.ReadOnly)
	ro.file(t, "a.txt", "a\n")
	_, terr := ro.tb.EditFile(bg, ro.call, tools.EditFileInput{Path: "a.txt", OldString: "a", NewString: "b"})
	requireFileDenied(t, terr, sandbox.ReadOnly)
	assert.Contains(t, terr.Message, `call edit_file again with sandbox_permissions="workspace-write"`)
}

// TestEditFileDiffMatchesDiffU checks the diff of edits deep inside a large
// file, where only a window goes through the diff algorithm, against
// diff(1) itself.
func TestEditFileDiffMatchesDiffU(t *testing.T) {
	if _, err := exec.LookPath("diff"); err != nil {
		t.Skip("diff(1) is not installed")
	}
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	tests := []struct {
		name     string
		old, new string
		all      bool
	}{
		{"one line in the middle", "line 2500\n", "changed 2500\n", false},
		{"insert lines", "line 10\n", "line 10\nnew a\nnew b\n", false},
		{"delete lines", "line 4000\nline 4001\nline 4002\n", "", false},
		{"first line", "line 1\n", "first\n", false},
		{"last line", "line 5000\n", "last", false},
		{"near the top", "line 77\n", "x\n", false},
		{"several hunks", "line 12", "L12", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := w.file(t, "big.txt", b.String())
			orig := filepath.Join(w.outside, "orig.txt")
			require.NoError(t, os.WriteFile(orig, []byte(b.String()), 0o644))
			res, terr := w.tb.EditFile(bg, w.call, tools.EditFileInput{Path: "big.txt", OldString: tt.old, NewString: tt.new, ReplaceAll: tt.all})
			require.Nil(t, terr)
			out, _ := exec.Command("diff", "-u", "--label", "a/big.txt", "--label", "b/big.txt", orig, p).Output()
			assert.Equal(t, string(out), res.Text)
		})
	}
}
