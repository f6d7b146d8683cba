//go:build linux

package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToolParameters drives the parameters of issue 13 through the real
// server: read_file's negative offset, write_file's append, edit_file's
// expected_replacements, grep's literal, context and output. Each is
// listed in tools/list as the tool table declares it, and the text the
// model receives is pinned.
func TestToolParameters(t *testing.T) {
	w := newWorld(t)
	var fifty strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&fifty, "line %d\n", i)
	}
	write := func(rel, content string) string {
		p := filepath.Join(w.ws, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	write("f.txt", fifty.String())
	write("src/a.go", "package a\n\nfunc A() {}\n\n// f(x) calls A\nfunc B() { A() }\n")
	write("src/b.go", "package a\n\nfunc C() { A(); A() }\n")
	gitConfig := write(".git/config", "[core]\n")
	// Apart from the world, whose snapshots read every file.
	huge := filepath.Join(t.TempDir(), "huge.log")
	f, err := os.Create(huge)
	require.NoError(t, err)
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(f, "head %d of a log\n", i)
	}
	tail := "\nsecond to last\nlast\n" // the hole is one line of NULs: it ends here
	require.NoError(t, f.Truncate(1<<40-int64(len(tail))))
	_, err = f.WriteAt([]byte(tail), 1<<40-int64(len(tail)))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	cs := w.stdio(t, clientOpts{version: "2025-11-25"})

	t.Run("tools/list", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		list, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		props := map[string]map[string]any{}
		tools := map[string]*mcp.Tool{}
		for _, tool := range list.Tools {
			tools[tool.Name] = tool
			for name, p := range tool.InputSchema.(map[string]any)["properties"].(map[string]any) {
				props[tool.Name+"."+name] = p.(map[string]any)
			}
		}
		assert.Equal(t, "integer", props["read_file.offset"]["type"])
		assert.Less(t, props["read_file.offset"]["minimum"], float64(0), "a negative offset is allowed")
		assert.Equal(t, "boolean", props["write_file.append"]["type"])
		assert.Equal(t, "integer", props["edit_file.expected_replacements"]["type"])
		assert.EqualValues(t, 1, props["edit_file.expected_replacements"]["minimum"])
		assert.Equal(t, "boolean", props["grep.literal"]["type"])
		assert.Equal(t, "integer", props["grep.context"]["type"])
		assert.EqualValues(t, 0, props["grep.context"]["minimum"])
		assert.EqualValues(t, 10, props["grep.context"]["maximum"])
		assert.Equal(t, []any{"content", "files", "count"}, props["grep.output"]["enum"])
		require.NotNil(t, tools["write_file"].Annotations)
		assert.False(t, tools["write_file"].Annotations.IdempotentHint, "an append repeated appends again")
	})

	t.Run("read_file offset -3", func(t *testing.T) {
		res := call(t, cs, "read_file", map[string]any{"path": "f.txt", "offset": -3})
		require.False(t, res.IsError, text(res))
		assert.Equal(t, "["+filepath.Join(w.ws, "f.txt")+": lines 48-50 of 50]\n    48\tline 48\n    49\tline 49\n    50\tline 50\n", text(res))
		assert.Nil(t, res.StructuredContent)
	})
	t.Run("read_file offset -2 of a 1 TiB file", func(t *testing.T) {
		started := time.Now()
		res := call(t, cs, "read_file", map[string]any{"path": huge, "offset": -2})
		require.False(t, res.IsError, text(res))
		assert.Less(t, time.Since(started), 10*time.Second, "the tail is read from the end")
		assert.Equal(t, "["+huge+": lines -2 to -1 counted from the end, of more than 2]\n"+
			"    -2\tsecond to last\n    -1\tlast\n"+
			"[line numbers count from the end (-1 is the last line): the file is 1.0 TiB (1099511627776 bytes), "+
			"and the lines before these were not counted; a more negative offset reads further back]\n", text(res))
	})

	t.Run("write_file append", func(t *testing.T) {
		p := filepath.Join(w.ws, "notes.txt")
		res := call(t, cs, "write_file", map[string]any{"path": "notes.txt", "content": "one\n", "append": true})
		require.False(t, res.IsError, text(res))
		assert.Equal(t, "Created "+p+" (4 bytes)", text(res), "a missing file is created")
		res = call(t, cs, "write_file", map[string]any{"path": "notes.txt", "content": "two\n", "append": true})
		require.False(t, res.IsError, text(res))
		assert.Equal(t, "Appended 4 bytes to "+p, text(res))
		assert.Equal(t, map[string]any{"path": p, "bytes_written": float64(4), "created": false}, structured(t, res))
		assert.Equal(t, "one\ntwo\n", fileContent(t, p))

		before := snapshotTree(t, w.base)
		res = call(t, cs, "write_file", map[string]any{"path": ".git/config", "content": "[core]\n\thooksPath = /tmp/evil\n", "append": true})
		assert.True(t, res.IsError)
		assert.True(t, strings.HasPrefix(text(res), "[sandbox: file access denied under workspace-write mode]\n"), text(res))
		assert.Contains(t, text(res), "write_file refused "+gitConfig)
		assert.Equal(t, "[core]\n", fileContent(t, gitConfig))
		assert.Equal(t, before, snapshotTree(t, w.base), "a refused append changes nothing")
	})

	t.Run("edit_file expected_replacements", func(t *testing.T) {
		b := filepath.Join(w.ws, "src", "b.go")
		before := snapshotTree(t, w.base)
		res := call(t, cs, "edit_file", map[string]any{"path": "src/b.go", "old_string": "A()", "new_string": "D()", "expected_replacements": 3})
		assert.True(t, res.IsError)
		assert.Equal(t, "INVALID_ARGUMENT", errorCode(t, res))
		assert.Equal(t, "old_string appears 2 times in "+b+" (at lines 3, 3), but expected_replacements is 3; nothing was changed: "+
			"read the file again, then set expected_replacements to the number you mean to replace, or change old_string", text(res))
		assert.Equal(t, before, snapshotTree(t, w.base), "the refused edit changed nothing")

		res = call(t, cs, "edit_file", map[string]any{"path": "src/b.go", "old_string": "A()", "new_string": "D()", "expected_replacements": 2})
		require.False(t, res.IsError, text(res))
		assert.Equal(t, "--- a/src/b.go\n+++ b/src/b.go\n@@ -1,3 +1,3 @@\n package a\n \n-func C() { A(); A() }\n+func C() { D(); D() }\n", text(res))
		assert.EqualValues(t, 2, structured(t, res)["replacements"])
	})

	t.Run("grep literal", func(t *testing.T) {
		res := call(t, cs, "grep", map[string]any{"pattern": "f(x)", "literal": true})
		require.False(t, res.IsError, text(res))
		assert.Equal(t, "src/a.go:5:// f(x) calls A\n", text(res))
	})
	t.Run("grep context", func(t *testing.T) {
		res := call(t, cs, "grep", map[string]any{"pattern": "^func", "path": "src", "context": 1})
		require.False(t, res.IsError, text(res))
		// Lines 4 and 5 of a.go meet: one group. b.go is another.
		want := "src/a.go-2-\nsrc/a.go:3:func A() {}\nsrc/a.go-4-\n" +
			"src/a.go-5-// f(x) calls A\nsrc/a.go:6:func B() { A() }\n" +
			"--\n" +
			"src/b.go-2-\nsrc/b.go:3:func C() { D(); D() }\n"
		assert.Equal(t, want, text(res))
		assert.Equal(t, strings.Split(strings.TrimSuffix(want, "\n"), "\n"), toStrings(structured(t, res)["matches"]),
			"structuredContent carries the same lines")
	})
	t.Run("grep output", func(t *testing.T) {
		res := call(t, cs, "grep", map[string]any{"pattern": "A\\(\\)", "path": "src", "output": "files"})
		require.False(t, res.IsError, text(res))
		assert.Equal(t, "src/a.go\n", text(res))
		res = call(t, cs, "grep", map[string]any{"pattern": "func", "path": "src", "output": "count"})
		require.False(t, res.IsError, text(res))
		assert.Equal(t, "src/a.go:2\nsrc/b.go:1\n", text(res))
	})
	t.Run("grep bad arguments", func(t *testing.T) {
		res := call(t, cs, "grep", map[string]any{"pattern": "func", "output": "lines"})
		assert.True(t, res.IsError)
		assert.Equal(t, "INVALID_ARGUMENT", errorCode(t, res))
		assert.Equal(t, `output must be content, files or count, not "lines"`, text(res))
		res = call(t, cs, "grep", map[string]any{"pattern": "func", "context": -1})
		assert.True(t, res.IsError)
		assert.Equal(t, "context must be between 0 and 10, not -1: it is how many lines to show before and after each match", text(res))
	})
}
