//go:build unix

package fsfence_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordonhq/cordon/fsfence"
)

// FuzzFenceResolve writes to arbitrary paths — relative ones are taken
// below the workspace, "$BASE" stands for the tree's base directory — in a
// tree full of symlinks pointing in and out. Whatever the fence accepts
// lands beneath the root and never on a protected path; whatever it
// refuses changes nothing at all.
func FuzzFenceResolve(f *testing.F) {
	f.Add("new.txt")
	f.Add("../outside/x")
	f.Add("linkout/x")
	f.Add("gitalias/hooks/pre-commit")
	f.Fuzz(func(t *testing.T, input string) {
		tr := newTreeIn(t, fastTempDir(t))
		fence := tr.fence(t)
		p := strings.ReplaceAll(input, "$BASE", tr.base)
		if !strings.HasPrefix(p, "/") {
			p = tr.ws + "/" + p
		}
		before := snapshot(t, tr.base)
		checkErr := fence.CheckWrite(p)
		_, err := fence.WriteFile(p, []byte("FUZZ MARKER"))
		after := snapshot(t, tr.base)

		if errors.Is(checkErr, fsfence.ErrDenied) {
			require.ErrorIs(t, err, fsfence.ErrDenied, "CheckWrite denied %q but WriteFile did not", p)
		}
		if errors.Is(err, fsfence.ErrDenied) {
			require.Equal(t, before, after, "a denied write of %q changed the file system", p)
			return
		}
		protected := []string{"ws/.git/hooks", "ws/.git/config", "ws/.cordon", "ws/.bashrc", "ws/.profile", "ws/.vscode", "ws/notes.txt", "ws/config-hardlink"}
		for k, v := range after {
			if before[k] == v {
				continue
			}
			require.True(t, k == "ws" || strings.HasPrefix(k, "ws/"), "write of %q changed %s, outside the root", p, k)
			for _, pr := range protected {
				require.False(t, k == pr || strings.HasPrefix(k, pr+"/"), "write of %q changed protected %s", p, k)
			}
			require.False(t, strings.HasPrefix(filepath.Base(k), ".cordon-"), "temporary file left: %s", k)
		}
		for k := range before {
			_, ok := after[k]
			require.True(t, ok, "write of %q removed %s", p, k)
		}
		if err == nil {
			require.Contains(t, afterValues(after), fileDesc(0o644, []byte("FUZZ MARKER")), "accepted write of %q is nowhere in the tree", p)
		}
	})
}

func afterValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
