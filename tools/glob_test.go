package tools_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// touch sets a file's modification time to base plus offset seconds.
func touch(t testing.TB, p string, offset int) {
	t.Helper()
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(offset) * time.Second)
	require.NoError(t, os.Chtimes(p, at, at))
}

func TestGlob(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	touch(t, w.file(t, "main.go", ""), 10)
	touch(t, w.file(t, "pkg/a.go", ""), 30)
	touch(t, w.file(t, "pkg/sub/b.go", ""), 20)
	touch(t, w.file(t, "pkg/sub/c.txt", ""), 40)
	touch(t, w.file(t, "pkg/z.go", ""), 20) // same time as b.go: path order breaks the tie
	w.file(t, ".git/objects/x.go", "")
	w.file(t, ".gitignore", "build/\n*.gen.go\n!keep.gen.go\n/rootonly.go\ndocs/internal\n")
	w.file(t, "build/out.go", "")
	w.file(t, "pkg/x.gen.go", "")
	touch(t, w.file(t, "pkg/keep.gen.go", ""), 5)
	w.file(t, "rootonly.go", "")
	touch(t, w.file(t, "pkg/rootonly.go", ""), 1)
	w.file(t, "docs/internal/d.go", "")
	touch(t, w.file(t, "pkg/docs/internal/e.go", ""), 2)
	w.file(t, "nested/.gitignore", "*.go\n!main.go\n")
	w.file(t, "nested/lib.go", "")
	touch(t, w.file(t, "nested/main.go", ""), 3)
	require.NoError(t, os.Mkdir(filepath.Join(w.ws, "gen"), 0o755))
	require.NoError(t, os.Symlink("../main.go", filepath.Join(w.ws, "gen", "link.go")))

	tests := []struct {
		name string
		in   tools.GlobInput
		want []string
	}{
		// A symlink is a match of its own, dated by its own mtime (now).
		{"all go files, newest first", tools.GlobInput{Pattern: "**/*.go"}, []string{
			"gen/link.go", "pkg/a.go", "pkg/sub/b.go", "pkg/z.go", "main.go", "pkg/keep.gen.go", "nested/main.go", "pkg/docs/internal/e.go", "pkg/rootonly.go"}},
		{"one directory", tools.GlobInput{Pattern: "*.go", Path: "pkg"}, []string{"pkg/a.go", "pkg/z.go", "pkg/keep.gen.go", "pkg/rootonly.go"}},
		{"literal prefix", tools.GlobInput{Pattern: "pkg/sub/*"}, []string{"pkg/sub/c.txt", "pkg/sub/b.go"}},
		{"subdirectory keeps the root .gitignore", tools.GlobInput{Pattern: "**", Path: "pkg/sub"}, []string{"pkg/sub/c.txt", "pkg/sub/b.go"}},
		{"absolute pattern", tools.GlobInput{Pattern: filepath.Join(w.ws, "pkg", "**", "b.go")}, []string{"pkg/sub/b.go"}},
		{"braces", tools.GlobInput{Pattern: "{main,pkg/a}.go"}, []string{"pkg/a.go", "main.go"}},
		{"no match", tools.GlobInput{Pattern: "**/*.rs"}, []string{}},
		{"missing literal prefix", tools.GlobInput{Pattern: "nope/**/*.go"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, terr := w.tb.Glob(bg, w.call, tt.in)
			require.Nil(t, terr)
			assert.Equal(t, tt.want, res.Structured["matches"])
			assert.Equal(t, false, res.Structured["truncated"])
		})
	}

	res, terr := w.tb.Glob(bg, w.call, tools.GlobInput{Pattern: "*", Path: w.outside})
	require.Nil(t, terr)
	assert.Equal(t, []string{filepath.Join(w.outside, "file.txt")}, res.Structured["matches"], "outside the workspace, paths are absolute")
	assert.Equal(t, filepath.Join(w.outside, "file.txt")+"\n", res.Text)

	for _, in := range []tools.GlobInput{{Pattern: ""}, {Pattern: "[a-"}, {Pattern: "*\x00"}, {Pattern: "*", Path: "main.go"}, {Pattern: "/x/*", Path: "pkg"}} {
		_, terr := w.tb.Glob(bg, w.call, in)
		requireFileCode(t, terr, tools.CodeInvalidArgument)
	}
	_, terr = w.tb.Glob(bg, w.call, tools.GlobInput{Pattern: "*", Path: "missing"})
	requireFileCode(t, terr, tools.CodeNotFound)
}

func TestGlobCap(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	for i := range tools.MaxGlobMatches + 10 {
		touch(t, w.file(t, fmt.Sprintf("d/f%04d.txt", i), ""), i)
	}
	res, terr := w.tb.Glob(bg, w.call, tools.GlobInput{Pattern: "**/*.txt"})
	require.Nil(t, terr)
	matches := res.Structured["matches"].([]string)
	assert.Len(t, matches, tools.MaxGlobMatches)
	assert.Equal(t, "d/f1009.txt", matches[0], "newest first")
	assert.Equal(t, true, res.Structured["truncated"])
	assert.Equal(t, tools.MaxGlobMatches+10, res.Structured["total"], "the count the text gives is in structuredContent too")
	assert.Contains(t, res.Text, "[showing the 1000 newest of 1010 matches")
}

// TestGlobReadDeny: glob never lists a read-deny directory nor names a
// read-deny file, however the walk reaches it.
func TestGlobReadDeny(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	require.NoError(t, os.WriteFile(filepath.Join(w.home, ".netrc"), []byte(fileCanary), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.home, "notes.txt"), []byte("hi"), 0o644))
	require.NoError(t, os.Symlink(w.home, filepath.Join(w.ws, "home")))
	for _, in := range []tools.GlobInput{
		{Pattern: "**", Path: w.home}, {Pattern: "**", Path: "home"}, {Pattern: "home/**"},
		{Pattern: filepath.Join(w.home, "**")}, {Pattern: "**/*canary*", Path: w.base},
	} {
		res, terr := w.tb.Glob(bg, w.call, in)
		require.Nil(t, terr, "%+v", in)
		for _, m := range res.Structured["matches"].([]string) {
			assert.NotContains(t, m, ".ssh", "%+v", in)
			assert.NotContains(t, m, ".netrc", "%+v", in)
			assert.NotContains(t, m, "cordon/http-token", "%+v", in)
		}
		assert.NotContains(t, res.Text, "id_canary")
	}
	_, terr := w.tb.Glob(bg, w.call, tools.GlobInput{Pattern: "*", Path: filepath.Join(w.home, ".ssh")})
	requireFileDenied(t, terr, sandbox.WorkspaceWrite)
}
