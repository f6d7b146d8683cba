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
