package tools

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/cordonhq/cordon/fsfence"
	"github.com/stretchr/testify/require"
)

// TestSearchFastPathKeepsRules: grep's faster path (batched jobs, files
// read through fsfence.Dir.ReadFunc, the literal prefilter) and glob's
// parallel walk skip .git, .gitignored files and the read-deny list (by
// path and by identity, a hard link) exactly as before, and find what the
// plain path finds on the same tree: the ordered walk, each file opened by
// path through the fence and read whole, each line matched on its own.
func TestSearchFastPathKeepsRules(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "cordon-fastpath-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	ws := filepath.Join(base, "work space")
	write := func(rel, content string) string {
		p := filepath.Join(ws, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	write("a.txt", "needle one\nno\r\nneedle two\r\nneedle(\n")
	write("sub/b.go", "x needle\nfunc (s *T) Close() error\n")
	write("sub/deep/c.txt", "needle(x)\nNEEDLE\n\nend needle")
	write(".git/config", "needle\n")
	write(".git/objects/x", "needle\n")
	write(".gitignore", "*.log\nbuild/\n!keep.log\n")
	write("d.log", "needle\n")
	write("keep.log", "needle\n")
	write("build/e.txt", "needle\n")
	write("nested/.gitignore", "*.txt\n")
	write("nested/f.txt", "needle\n")
	write("nested/g.go", "needle\n")
	write("secret/s.txt", "needle\n")
	write("denied.txt", "needle\n")
	write("bin.dat", "needle\x00\n")
	// Binary is what read_file calls binary: a NUL in the first sniffSize
	// bytes; one later does not make a file binary.
	write("late-nul.txt", strings.Repeat("hay\n", sniffSize/4)+"needle\x00late\n")
	for i := range 3*grepBatch + 5 { // more than one batch of a directory
		content := "hay\n"
		if i%7 == 0 {
			content = "hay\nneedle " + fmt.Sprint(i) + "\n"
		}
		write(fmt.Sprintf("many/f%03d.txt", i), content)
	}
	canary := filepath.Join(base, "outside", "canary")
	require.NoError(t, os.MkdirAll(filepath.Dir(canary), 0o755))
	require.NoError(t, os.WriteFile(canary, []byte("needle canary\n"), 0o600))
	require.NoError(t, os.Link(canary, filepath.Join(ws, "hardlink.txt")))
	require.NoError(t, os.Symlink("a.txt", filepath.Join(ws, "link.txt")))

	fence, err := fsfence.New(fsfence.Config{ReadDeny: []string{filepath.Join(ws, "secret"), filepath.Join(ws, "denied.txt"), canary}})
	require.NoError(t, err)
	walk := treeWalk{fence: fence, root: ws, ignoreBase: ws}
	ctx := context.Background()

	// What the walk keeps, in order: the ordered walk and the parallel one.
	var ordered []string
	require.NoError(t, walk.run(ctx, func(p string, d fs.DirEntry, _ *walkDir) error {
		ordered = append(ordered, p)
		return nil
	}))
	var mu sync.Mutex
	var parallel []string
	require.NoError(t, walk.runParallel(ctx, 4, func(p string, d fs.DirEntry, _ *walkDir) error {
		mu.Lock()
		defer mu.Unlock()
		parallel = append(parallel, p)
		return nil
	}))
	slices.Sort(parallel)
	require.ElementsMatch(t, ordered, parallel, "the parallel walk keeps what the ordered one keeps")
	rel := func(p string) string { r, _ := filepath.Rel(ws, p); return filepath.ToSlash(r) }
	kept := map[string]bool{}
	for _, p := range ordered {
		kept[rel(p)] = true
	}
	for _, gone := range []string{".git/config", ".git/objects/x", "d.log", "build/e.txt", "nested/f.txt", "secret/s.txt", "denied.txt"} {
		require.False(t, kept[gone], "%s is walked", gone)
	}
	for _, there := range []string{"a.txt", "keep.log", "nested/g.go", "sub/deep/c.txt", "many/f100.txt", "late-nul.txt"} {
		require.True(t, kept[there], "%s is not walked", there)
	}

	// glob's matching on the parallel walk, against the whole relative
	// path on the ordered one.
	for _, pattern := range []string{"**/*", "**/*.txt", "many/*", "sub/**"} {
		match := globMatcher(pattern)
		var want, got []string
		for _, p := range ordered {
			r := rel(p)
			if doublestar.MatchUnvalidated(pattern, r) {
				if _, err := fence.Lstat(p); err == nil {
					want = append(want, r)
				}
			}
		}
		for _, p := range parallel {
			if match(rel(p), filepath.Base(p)) {
				if _, err := fence.Lstat(p); err == nil {
					got = append(got, rel(p))
				}
			}
		}
		require.Equal(t, want, got, "glob %s", pattern)
		require.NotContains(t, got, "hardlink.txt", "a hard link to a read-deny file is named")
	}

	// grep: the faster path against the plain one, pattern by pattern.
	patterns := []string{"needle", regexp.QuoteMeta("needle("), `ne+dle`, `needle\(`, `(?i)NEEDLE`, `^needle`, `\w+ needle$`, `e\s+n`,
		`x needle|two`, `func \(\w+ \*\w+\) Close\(`, `(needle) (one)`, `needle\r$`}
	for _, pattern := range patterns {
		for _, output := range []string{grepContent, grepCount, grepFiles} {
			want := plainGrep(t, fence, ordered, rel, pattern, output)
			m, terr := newLineMatcher(pattern, false)
			require.Nil(t, terr)
			g := &grepRun{fence: fence, m: m, max: MaxGrepResults, output: output}
			require.NoError(t, g.searchTree(ctx, walk, ""))
			var got []string
			for _, h := range g.hits {
				got = append(got, hitKey(rel(h.path), h, output))
			}
			require.Equal(t, want, got, "pattern %q, output %s", pattern, output)
			for _, line := range got {
				for _, gone := range []string{".git/", "d.log", "build/", "nested/f.txt", "secret/", "denied.txt", "hardlink.txt", "bin.dat", "link.txt"} {
					require.False(t, strings.HasPrefix(line, gone), "pattern %q: %s", pattern, line)
				}
			}
		}
	}
}

// plainGrep is grep the plain way: every regular file the ordered walk keeps,
// opened by path through the fence, read whole, skipped when its first
// sniffSize bytes hold a NUL, each line matched on its own.
func plainGrep(t *testing.T, fence *fsfence.Fence, files []string, rel func(string) string, pattern, output string) []string {
	re := regexp.MustCompile("(?m)" + pattern)
	var out []string
	for _, p := range files {
		if fi, err := fence.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			continue // symlinks are not followed, nor other kinds opened
		}
		f, err := fence.OpenFile(p)
		if err != nil {
			continue // refused (a read-deny file by identity), or a symlink
		}
		data, err := io.ReadAll(f)
		f.Close()
		require.NoError(t, err)
		if bytes.IndexByte(data[:min(len(data), sniffSize)], 0) >= 0 {
			continue
		}
		lines := strings.Split(string(data), "\n")
		if strings.HasSuffix(string(data), "\n") {
			lines = lines[:len(lines)-1]
		}
		count := 0
		for i, l := range lines {
			if !re.MatchString(l) {
				continue
			}
			count++
			if output == grepContent {
				out = append(out, hitKey(rel(p), grepHit{line: i + 1}, output))
			}
			if output == grepFiles {
				break
			}
		}
		switch {
		case count > 0 && output == grepCount:
			out = append(out, hitKey(rel(p), grepHit{count: count}, output))
		case count > 0 && output == grepFiles:
			out = append(out, hitKey(rel(p), grepHit{}, output))
		}
	}
	return out
}

// hitKey is a hit as the comparison sees it: the file and line (output
// content; the text is matchText's business), count, or file.
func hitKey(rel string, h grepHit, output string) string {
	switch output {
	case grepCount:
		return fmt.Sprintf("%s:%d", rel, h.count)
	case grepFiles:
		return rel
	}
	return fmt.Sprintf("%s:%d", rel, h.line)
}
