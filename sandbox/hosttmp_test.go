package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProgramTrees: what a program under the host's /tmp loads from, and
// nothing for programs elsewhere.
func TestProgramTrees(t *testing.T) {
	base, err := os.MkdirTemp("/tmp", "cordon-trees ")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	file := func(rel string) string {
		p := filepath.Join(base, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
		return p
	}
	js := file("proj/node_modules/pkg/dist/index.js")
	require.NoError(t, os.MkdirAll(filepath.Join(base, "proj/node_modules/.bin"), 0o755))
	link := filepath.Join(base, "proj/node_modules/.bin/pkg")
	require.NoError(t, os.Symlink("../pkg/dist/index.js", link))
	file("venv/pyvenv.cfg")
	py := file("venv/bin/server")
	plain := file("release/cordon")
	top, err := os.CreateTemp("/tmp", "cordon-trees-top-")
	require.NoError(t, err)
	top.Close()
	t.Cleanup(func() { os.Remove(top.Name()) })

	nm := filepath.Join(base, "proj/node_modules")
	assert.Equal(t, []string{nm}, ProgramTrees([]string{link}, "/"), "a node package: its node_modules")
	assert.Equal(t, []string{nm}, ProgramTrees([]string{"node", js}, "/"), "an argument naming a script counts")
	assert.Equal(t, []string{filepath.Join(base, "venv")}, ProgramTrees([]string{py}, "/"), "a virtual environment: all of it")
	assert.Equal(t, []string{filepath.Join(base, "release")}, ProgramTrees([]string{"./cordon"}, filepath.Dir(plain)), "relative to the directory it runs in")
	assert.Equal(t, []string{top.Name()}, ProgramTrees([]string{top.Name()}, "/"), "a file directly in /tmp: only itself")
	assert.Empty(t, ProgramTrees([]string{"sh", "-c", "cat /tmp"}, "/"), "a program elsewhere, and words that are not files")
	assert.Empty(t, ProgramTrees([]string{"/tmp"}, "/"))
}
