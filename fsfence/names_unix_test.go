//go:build unix

package fsfence_test

import (
	"os"
	"testing"

	"github.com/cordonhq/cordon/fsfence"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProtectedNamesOfSeveralComponents: ".hg/hgrc" is refused wherever
// its components follow each other, ignoring case, and nowhere else; a
// malformed name is refused when the fence is made.
func TestProtectedNamesOfSeveralComponents(t *testing.T) {
	tr := newTree(t)
	cfg := tr.config()
	cfg.ProtectedNames = []string{".vscode", ".hg/hgrc", ".jj/repo/config.toml"}
	f, err := fsfence.New(cfg)
	require.NoError(t, err)
	before := snapshot(t, tr.ws)
	for _, rel := range []string{"pkg/.vscode/tasks.json", "a/b/c/d/e/.VSCode", "pkg/.hg/hgrc", "pkg/.HG/HGRC", "x/.jj/repo/config.toml"} {
		_, err := f.WriteFile(tr.p("ws/"+rel), []byte("evil"))
		requireDenied(t, err, fsfence.ReasonProtected)
	}
	assert.Equal(t, before, snapshot(t, tr.ws))
	for _, rel := range []string{"pkg/.hg/store/data", "pkg/hgrc", "hgrc/.hg", "x/.jj/repo/store", "vscode.txt"} {
		_, err := f.WriteFile(tr.p("ws/"+rel), []byte("ok"))
		require.NoError(t, err, rel)
		_, err = os.Stat(tr.p("ws/" + rel))
		require.NoError(t, err)
	}
	for _, bad := range []string{".hg//hgrc", "../x", ".hg/../x", "/abs", "a/./b"} {
		cfg.ProtectedNames = []string{bad}
		_, err := fsfence.New(cfg)
		assert.ErrorIs(t, err, fsfence.ErrInvalidPath, bad)
	}
}
