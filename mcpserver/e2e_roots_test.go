//go:build linux

package mcpserver_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientRootsOnlyNarrow: a client's roots narrow the writable roots and
// can never widen them or replace the configured workspace.
func TestClientRootsOnlyNarrow(t *testing.T) {
	w := newWorld(t)
	sub := filepath.Join(w.ws, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	cs := w.stdio(t, clientOpts{version: "2025-11-25", roots: []string{sub, w.outside}})

	res := call(t, cs, "write_file", map[string]any{"path": "sub/ok.txt", "content": "ok"})
	assert.False(t, res.IsError, text(res))
	res = call(t, cs, "write_file", map[string]any{"path": "top.txt", "content": "no"})
	assert.True(t, res.IsError, "the workspace outside the client's root is no longer writable")
	assert.NoFileExists(t, filepath.Join(w.ws, "top.txt"))
	res = call(t, cs, "write_file", map[string]any{"path": filepath.Join(w.outside, "new.txt"), "content": "no"})
	assert.True(t, res.IsError, "a client root outside the workspace adds nothing")
	assert.NoFileExists(t, filepath.Join(w.outside, "new.txt"))
	res = call(t, cs, "bash", map[string]any{"command": "echo x > top.txt; echo y > sub/b.txt; echo z > " + filepath.Join(w.outside, "b.txt")})
	assert.NoFileExists(t, filepath.Join(w.ws, "top.txt"), "the backend uses the same narrowed roots")
	assert.NoFileExists(t, filepath.Join(w.outside, "b.txt"))
	assert.FileExists(t, filepath.Join(sub, "b.txt"))

	wide := w.stdio(t, clientOpts{version: "2025-11-25", roots: []string{"/"}})
	res = call(t, wide, "write_file", map[string]any{"path": w.outsideFile, "content": "no"})
	assert.True(t, res.IsError, "a root of / widens nothing")
	assert.Equal(t, "outside\n", fileContent(t, w.outsideFile))
	res = call(t, wide, "write_file", map[string]any{"path": "top.txt", "content": "yes"})
	assert.False(t, res.IsError, text(res))
}

// TestClientRootsOutsideWorkspaceSetAside: an agent started in another
// directory than --workspace answers roots/list with that directory (as
// Gemini CLI, Qwen Code and opencode do). Its roots hold none of the
// writable roots, so they narrow nothing: the workspace stays writable for
// the file tools and bash, and the instructions, sandbox_status, the
// session log and a narrowing denial all say what the roots did.
func TestClientRootsOutsideWorkspaceSetAside(t *testing.T) {
	w := newWorld(t)
	cs := w.stdio(t, clientOpts{version: "2025-11-25", roots: []string{w.outside}})

	res := call(t, cs, "write_file", map[string]any{"path": "new.txt", "content": "written"})
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "written", fileContent(t, filepath.Join(w.ws, "new.txt")))
	res = call(t, cs, "bash", map[string]any{"command": "echo shell > by-bash.txt"})
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "shell\n", fileContent(t, filepath.Join(w.ws, "by-bash.txt")))
	res = call(t, cs, "write_file", map[string]any{"path": filepath.Join(w.outside, "new.txt"), "content": "no"})
	assert.True(t, res.IsError, "the client's root adds nothing")
	assert.NoFileExists(t, filepath.Join(w.outside, "new.txt"))

	ws, err := filepath.EvalSymlinks(w.ws)
	require.NoError(t, err)
	assert.Contains(t, cs.InitializeResult().Instructions, "You may write inside the workspace "+w.ws)
	st := call(t, cs, "sandbox_status", nil)
	assert.Contains(t, structured(t, st)["writable_roots"], ws, "sandbox_status agrees with the instructions")
	assert.Contains(t, text(st), "were set aside: they hold none of the writable roots")
	assert.Contains(t, structured(t, st)["client_roots_note"], "set aside")

	logs, err := filepath.Glob(filepath.Join(w.state, "sessions", "*.jsonl"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
	assert.Contains(t, fileContent(t, logs[0]), `"type":"roots","data":{"roots":["`+w.outside+`"]`)
	assert.Contains(t, fileContent(t, logs[0]), `"set_aside":true`)
}

// TestClientRootsNarrowingDenialOffersNoEscalation: a write the client's
// roots took away says so and suggests no escalation, which would not be
// about what refused it.
func TestClientRootsNarrowingDenialOffersNoEscalation(t *testing.T) {
	w := newWorld(t)
	sub := filepath.Join(w.ws, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	cs := w.stdio(t, clientOpts{version: "2025-11-25", roots: []string{sub}})
	res := call(t, cs, "write_file", map[string]any{"path": "top.txt", "content": "no"})
	require.True(t, res.IsError)
	assert.Contains(t, text(res), "[sandbox: file access denied under workspace-write mode]")
	assert.Contains(t, text(res), "narrowed by the client's roots to ")
	assert.NotContains(t, text(res), "sandbox_permissions", "no escalation is suggested for the client's narrowing")
	assert.NoFileExists(t, filepath.Join(w.ws, "top.txt"))
	assert.Contains(t, text(call(t, cs, "sandbox_status", nil)), "narrow the writable roots to ")
}
