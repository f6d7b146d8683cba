package tools_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestListDirectory(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "b.txt", "12345")
	w.file(t, "a/x.go", "package a\n")
	w.file(t, "a/deep/y.go", "package deep\n")
	w.file(t, "a/deep/deeper/z.go", "")
	w.file(t, "a/.git/HEAD", "ref: refs/heads/main\n")
	require.NoError(t, os.Symlink("b.txt", filepath.Join(w.ws, "link")))

	tests := []struct {
		name    string
		in      tools.ListDirectoryInput
		text    string
		entries []tools.ListEntry
	}{
		{"depth 1 by default", tools.ListDirectoryInput{}, "a/\nb.txt\t5\nlink\t(symlink)\n", []tools.ListEntry{
			{Path: "a", Type: "dir"}, {Path: "b.txt", Type: "file", Size: 5}, {Path: "link", Type: "symlink"}}},
		{"depth 2, .git not entered", tools.ListDirectoryInput{Path: "a", Depth: 2}, ".git/\ndeep/\ndeep/deeper/\ndeep/y.go\t13\nx.go\t10\n", []tools.ListEntry{
			{Path: ".git", Type: "dir"}, {Path: "deep", Type: "dir"}, {Path: "deep/deeper", Type: "dir"}, {Path: "deep/y.go", Type: "file", Size: 13}, {Path: "x.go", Type: "file", Size: 10}}},
		{"absolute path, depth 5", tools.ListDirectoryInput{Path: filepath.Join(w.ws, "a", "deep"), Depth: 5}, "deeper/\ndeeper/z.go\t0\ny.go\t13\n", []tools.ListEntry{
			{Path: "deeper", Type: "dir"}, {Path: "deeper/z.go", Type: "file"}, {Path: "y.go", Type: "file", Size: 13}}},
		{"dot-dot inside the workspace", tools.ListDirectoryInput{Path: "a/deep/deeper/.."}, "deeper/\ny.go\t13\n", []tools.ListEntry{
			{Path: "deeper", Type: "dir"}, {Path: "y.go", Type: "file", Size: 13}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, terr := w.tb.ListDirectory(bg, w.call, tt.in)
			require.Nil(t, terr)
			assert.Equal(t, tt.text, res.Text)
			assert.Equal(t, tt.entries, res.Structured["entries"])
			assert.Equal(t, false, res.Structured["truncated"])
		})
	}

	require.NoError(t, os.Mkdir(filepath.Join(w.ws, "void"), 0o755))
	res, terr := w.tb.ListDirectory(bg, w.call, tools.ListDirectoryInput{Path: "void"})
	require.Nil(t, terr)
	assert.Equal(t, "(empty directory)\n", res.Text)
	assert.Equal(t, []tools.ListEntry{}, res.Structured["entries"])

	for _, in := range []tools.ListDirectoryInput{{Depth: 6}, {Depth: -1}, {Path: "b.txt"}, {Path: "a\x00"}} {
		_, terr := w.tb.ListDirectory(bg, w.call, in)
		requireFileCode(t, terr, tools.CodeInvalidArgument)
	}
	_, terr = w.tb.ListDirectory(bg, w.call, tools.ListDirectoryInput{Path: "missing"})
	requireFileCode(t, terr, tools.CodeNotFound)
}

func TestListDirectoryCap(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	for i := range tools.MaxListEntries + 5 {
		w.file(t, fmt.Sprintf("many/f%04d", i), "")
	}
	res, terr := w.tb.ListDirectory(bg, w.call, tools.ListDirectoryInput{Path: "many"})
	require.Nil(t, terr)
	entries := res.Structured["entries"].([]tools.ListEntry)
	assert.Len(t, entries, tools.MaxListEntries)
	assert.Equal(t, "f0999", entries[len(entries)-1].Path)
	assert.Equal(t, true, res.Structured["truncated"])
	assert.Contains(t, res.Text, "[listing cut at 1000 entries")

	// Exactly at the cap is not truncated.
	require.NoError(t, os.Remove(filepath.Join(w.ws, "many", "f1000")))
	for i := 1001; i < tools.MaxListEntries+5; i++ {
		require.NoError(t, os.Remove(filepath.Join(w.ws, "many", fmt.Sprintf("f%04d", i))))
	}
	res, terr = w.tb.ListDirectory(bg, w.call, tools.ListDirectoryInput{Path: "many"})
	require.Nil(t, terr)
	assert.Equal(t, false, res.Structured["truncated"])
}

// TestListDirectoryReadDeny: a listing never shows a read-deny entry, nor
// anything beneath one, and listing one is refused.
func TestListDirectoryReadDeny(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	require.NoError(t, os.WriteFile(filepath.Join(w.home, ".netrc"), []byte(fileCanary), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.home, "notes.txt"), []byte("hi"), 0o644))
	require.NoError(t, os.Symlink(w.home, filepath.Join(w.ws, "home")))

	for _, p := range []string{w.home, "home"} {
		res, terr := w.tb.ListDirectory(bg, w.call, tools.ListDirectoryInput{Path: p, Depth: 5})
		require.Nil(t, terr)
		assert.NotContains(t, res.Text, ".ssh")
		assert.NotContains(t, res.Text, "id_canary")
		assert.NotContains(t, res.Text, ".netrc")
		assert.NotContains(t, res.Text, "http-token", "the state dir is read-deny")
		assert.Contains(t, res.Text, "notes.txt\t2\n")
		assert.Contains(t, res.Text, ".config/cordon/\n", "the config dir is protected, not hidden")
	}
	for _, p := range []string{filepath.Join(w.home, ".ssh"), "home/.ssh", w.state} {
		_, terr := w.tb.ListDirectory(bg, w.call, tools.ListDirectoryInput{Path: p})
		requireFileDenied(t, terr, sandbox.WorkspaceWrite)
	}
}
