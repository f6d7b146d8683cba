package tools_test

import (
	"path/filepath"
	"testing"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFileToolsRefuseProtectedNamesAtAnyDepth: write_file refuses every
// entry of the protected-name list at the top of the workspace, one level
// down and deeper than any search goes, whether the directory exists or
// not; edit_file refuses an existing nested one. Nothing reaches the host.
func TestFileToolsRefuseProtectedNamesAtAnyDepth(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "pkg/main.go", "package main\n")
	w.file(t, "pkg/.vscode/tasks.json", `{"tasks":[]}`)
	w.file(t, "pkg/.hg/store/x", "")
	before := snapshotTree(t, w.ws)
	for _, e := range sandbox.ProtectedNameList {
		t.Run(e.Name, func(t *testing.T) {
			for _, dir := range []string{".", "pkg", "new", "a/b/c/d/e/f"} {
				rel := filepath.Join(dir, filepath.FromSlash(e.Name))
				_, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: rel, Content: "evil"})
				requireFileDenied(t, terr, sandbox.WorkspaceWrite)
				_, terr = w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: filepath.Join(rel, "settings.json"), Content: "evil"})
				requireFileDenied(t, terr, sandbox.WorkspaceWrite)
			}
		})
	}
	_, terr := w.tb.EditFile(bg, w.call, tools.EditFileInput{Path: "pkg/.vscode/tasks.json", OldString: "[]", NewString: `[{"runOptions":{"runOn":"folderOpen"}}]`})
	requireFileDenied(t, terr, sandbox.WorkspaceWrite)
	assert.Equal(t, before, snapshotTree(t, w.ws), "a refused write reached the host")

	// Beside them, code is written as ever, .hg's store included.
	for _, rel := range []string{"pkg/main.go", "pkg/.hg/store/y", "pkg/vscode.go", "pkg/hgrc"} {
		_, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: rel, Content: "ok"})
		require.Nil(t, terr, rel)
	}
}

// TestFileToolsRefuseAFileOnTheWay: write_file refuses a file where a
// protected name's tool expects a directory it reads through (Jujutsu's
// .jj/repo, a pointer to the repository and its config.toml), at any
// depth; a first component alone stays writable (a kernel tree's .config).
func TestFileToolsRefuseAFileOnTheWay(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	for _, rel := range []string{".jj/repo", "pkg/.jj/repo", "a/b/c/d/e/.JJ/Repo"} {
		_, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: rel, Content: "/tmp/evil"})
		requireFileDenied(t, terr, sandbox.WorkspaceWrite)
		assert.NoFileExists(t, filepath.Join(w.ws, rel))
	}
	for _, rel := range []string{".config", ".jj/working_copy.txt"} {
		_, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: rel, Content: "ok"})
		require.Nil(t, terr, rel)
	}
}
