package tools

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/fsfence"
	"github.com/stretchr/testify/require"
)

// TestFileSearcherBoundaries runs the buffered search with tiny buffers, so
// that every line meets a read boundary, a growth or the over-long-line
// cut, and compares it with a plain per-line search of the same text.
func TestFileSearcherBoundaries(t *testing.T) {
	dir, err := os.MkdirTemp("/var/tmp", "cordon-grep-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	f, err := fsfence.New(fsfence.Config{})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 11))
	words := []string{"ab", "a", "b", "\n", "\n", " ", "\r", "ba", "aab"}
	patterns := []string{"ab", "^a", "b$", `a\s+b`, "^$", "(?i)AB", `\Aa`, `b\z`, "[^a]b", "a*"}
	for round := range 300 {
		var sb strings.Builder
		for range rng.IntN(200) {
			sb.WriteString(words[rng.IntN(len(words))])
		}
		text := sb.String()
		p := filepath.Join(dir, "f.txt")
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		initial := 1 + rng.IntN(16)
		maxLine := max(initial, 8+rng.IntN(40))
		lines := strings.Split(text, "\n")
		if text == "" || strings.HasSuffix(text, "\n") {
			lines = lines[:len(lines)-1] // no line after the last newline
		}
		for _, pattern := range patterns {
			m, terr := newLineMatcher(pattern, false)
			require.Nil(t, terr)
			naive := regexp.MustCompile(pattern)
			var want []int
			for i, l := range lines {
				if len(l) > maxLine {
					l = l[:maxLine]
				}
				if naive.MatchString(l) {
					want = append(want, i+1)
				}
			}
			s := &fileSearcher{fence: f, m: m, limit: 1 << 30, buf: make([]byte, initial), maxLine: maxLine}
			var got []int
			for _, h := range s.search(context.Background(), p) {
				got = append(got, h.line)
			}
			require.Equal(t, want, got, "round %d, pattern %q, buffer %d..%d, text %q", round, pattern, initial, maxLine, text)

			// With context: every line within c of a match, each once,
			// in order, the matches as matches.
			c := 1 + rng.IntN(3)
			var wantCtx []string
			for i := range lines {
				for _, m := range want {
					if i+1 >= m-c && i+1 <= m+c {
						kind := "-"
						if slices.Contains(want, i+1) {
							kind = ":"
						}
						wantCtx = append(wantCtx, fmt.Sprintf("%d%s", i+1, kind))
						break
					}
				}
			}
			s = &fileSearcher{fence: f, m: m, limit: 1 << 30, context: c, buf: make([]byte, initial), maxLine: maxLine}
			var gotCtx []string
			for _, h := range s.search(context.Background(), p) {
				kind := ":"
				if h.context {
					kind = "-"
				}
				gotCtx = append(gotCtx, fmt.Sprintf("%d%s", h.line, kind))
			}
			require.Equal(t, wantCtx, gotCtx, "round %d, pattern %q, context %d, buffer %d..%d, text %q", round, pattern, c, initial, maxLine, text)

			// Counting: one hit with the number of matching lines.
			s = &fileSearcher{fence: f, m: m, limit: 1 << 30, count: true, buf: make([]byte, initial), maxLine: maxLine}
			counted := s.search(context.Background(), p)
			if len(want) == 0 {
				require.Empty(t, counted)
			} else {
				require.Equal(t, []grepHit{{path: p, count: len(want)}}, counted, "round %d, pattern %q", round, pattern)
			}
		}
	}
}

// TestRelBelow: the walk's fast relative path agrees with filepath.Rel.
func TestRelBelow(t *testing.T) {
	for _, c := range [][2]string{
		{"/a/b", "/a/b/c"}, {"/a/b", "/a/b/c/d.go"}, {"/", "/x"}, {"/", "/x/y"}, {"/a/b", "/a/b"},
		{"/a/b", "/a/bc/d"}, {"/a/b", "/a"}, {"/a/b", "/x/y"}, {"/", "/"},
	} {
		rel, err := filepath.Rel(c[0], c[1])
		want, wantOK := filepath.ToSlash(rel), err == nil && rel != "."
		got, ok := relBelow(c[0], c[1])
		require.Equal(t, wantOK, ok, "%v", c)
		if ok {
			require.Equal(t, want, got, "%v", c)
		}
	}
}

// shortReader returns at most step bytes a read, as procfs and some FUSE
// file systems do.
type shortReader struct {
	data  []byte
	step  int
	reads int
}

func (r *shortReader) Read(p []byte) (int, error) {
	r.reads++
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.step)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestFillShortReads: a short read ends the file only once the size seen
// at the open has been read (what a file grew by after its open is not
// read); a size of 0 (procfs) or -1 means read to EOF.
func TestFillShortReads(t *testing.T) {
	all := []byte(strings.Repeat("0123456789", 100))
	for _, c := range []struct {
		size      int64
		wantReads int
		want      []byte
	}{{-1, 101, all}, {0, 101, all}, {1000, 100, all}, {500, 50, all[:500]}} {
		data := c.want
		r := &shortReader{data: slices.Clone(all), step: 10}
		buf := make([]byte, 4096)
		var done int64
		n, eof, err := fill(r, buf, c.size, &done)
		require.NoError(t, err)
		require.True(t, eof, "size %d", c.size)
		require.Equal(t, data, buf[:n], "size %d", c.size)
		require.Equal(t, c.wantReads, r.reads, "size %d", c.size)
	}
}
