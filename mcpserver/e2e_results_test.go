//go:build linux

package mcpserver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResultsSayTheSameBothWays: some clients pass the model only a
// result's text, others (Claude Code, Codex) only its structuredContent
// when there is one (SPEC §5). So whatever the text carries, the
// structuredContent carries too, and read_file, whose lines must arrive
// verbatim, has no structuredContent at all.
func TestResultsSayTheSameBothWays(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "src", "a.go"), []byte("package a\n\nfunc A() string { return \"tab\\there\" }\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "src", "b.go"), []byte("package a\n"), 0o644))
	cs := w.stdio(t, clientOpts{version: "2025-11-25"})

	lines := func(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }
	t.Run("read_file", func(t *testing.T) {
		res := call(t, cs, "read_file", map[string]any{"path": "src/a.go"})
		require.False(t, res.IsError, text(res))
		assert.Nil(t, res.StructuredContent)
		assert.Equal(t, "["+filepath.Join(w.ws, "src", "a.go")+": lines 1-3 of 3]\n"+
			"     1\tpackage a\n     2\t\n     3\tfunc A() string { return \"tab\\there\" }\n", text(res))
	})
	t.Run("bash", func(t *testing.T) {
		res := call(t, cs, "bash", map[string]any{"command": "printf 'one\\ntwo\\n'; exit 4"})
		require.False(t, res.IsError, text(res))
		st := structured(t, res)
		assert.Equal(t, "one\ntwo\n", st["output"])
		assert.EqualValues(t, 4, st["exit_code"])
		assert.Equal(t, "one\ntwo\n[exit code 4]", text(res), "the text is the output and the exit code, both in structuredContent")
	})
	t.Run("edit_file", func(t *testing.T) {
		res := call(t, cs, "edit_file", map[string]any{"path": "src/b.go", "old_string": "package a", "new_string": "package b"})
		require.False(t, res.IsError, text(res))
		st := structured(t, res)
		assert.Contains(t, text(res), "-package a\n+package b\n")
		assert.Equal(t, text(res), st["diff"])
		assert.EqualValues(t, 1, st["replacements"])
	})
	t.Run("write_file", func(t *testing.T) {
		res := call(t, cs, "write_file", map[string]any{"path": "src/c.txt", "content": "hello\n"})
		require.False(t, res.IsError, text(res))
		st := structured(t, res)
		assert.Equal(t, fmt.Sprintf("Created %s (6 bytes)", st["path"]), text(res))
		assert.Equal(t, true, st["created"])
		assert.EqualValues(t, 6, st["bytes_written"])
	})
	t.Run("glob", func(t *testing.T) {
		res := call(t, cs, "glob", map[string]any{"pattern": "src/*.go"})
		require.False(t, res.IsError, text(res))
		st := structured(t, res)
		assert.ElementsMatch(t, []any{"src/a.go", "src/b.go"}, st["matches"])
		assert.Equal(t, lines(text(res)), toStrings(st["matches"]), "the text is the matches, in order")
		assert.EqualValues(t, 2, st["total"])
	})
	t.Run("grep", func(t *testing.T) {
		res := call(t, cs, "grep", map[string]any{"pattern": "^package"})
		require.False(t, res.IsError, text(res))
		st := structured(t, res)
		assert.Equal(t, lines(text(res)), toStrings(st["matches"]))
		assert.Contains(t, toStrings(st["matches"]), "src/b.go:1:package b")
	})
	t.Run("list_directory", func(t *testing.T) {
		res := call(t, cs, "list_directory", map[string]any{"path": "src"})
		require.False(t, res.IsError, text(res))
		st := structured(t, res)
		var rendered []string
		for _, e := range st["entries"].([]any) {
			e := e.(map[string]any)
			rendered = append(rendered, fmt.Sprintf("%s\t%v", e["path"], e["size"]))
		}
		assert.Equal(t, lines(text(res)), rendered, "each line of the text is an entry with its size")
	})
	t.Run("sandbox_status", func(t *testing.T) {
		res := call(t, cs, "sandbox_status", nil)
		require.False(t, res.IsError, text(res))
		st := structured(t, res)
		for _, k := range []string{"mode", "preset", "approval", "status", "backend", "enforcement", "workspace_root", "network"} {
			assert.Contains(t, text(res), st[k].(string), k)
		}
		for _, k := range []string{"writable_roots", "protected_paths", "read_deny"} {
			for _, p := range toStrings(st[k]) {
				assert.Contains(t, text(res), p, k)
			}
		}
	})
	t.Run("denial", func(t *testing.T) {
		res := call(t, cs, "write_file", map[string]any{"path": filepath.Join(w.outside, "new.txt"), "content": "x"})
		require.True(t, res.IsError)
		st := structured(t, res)
		assert.True(t, strings.HasPrefix(text(res), "[sandbox: file access denied under workspace-write mode]\n"), text(res))
		assert.Equal(t, true, st["denied"])
		assert.Equal(t, map[string]any{"code": "SANDBOX_DENIED", "message": text(res)}, st["error"],
			"the whole text is in structuredContent.error.message")
	})
	t.Run("read_file error", func(t *testing.T) {
		res := call(t, cs, "read_file", map[string]any{"path": w.secret})
		require.True(t, res.IsError)
		assert.True(t, strings.HasPrefix(text(res), "[sandbox: file access denied under workspace-write mode]\n"), text(res))
		st := structured(t, res)
		assert.Equal(t, true, st["denied"], "a refusal carries structuredContent.denied, read_file's too: without an output schema nothing forbids it")
		assert.Equal(t, map[string]any{"code": "SANDBOX_DENIED", "message": text(res)}, st["error"])
	})
}

func toStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}
