//go:build unix

package fsfence_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordonhq/cordon/fsfence"
)

// FuzzDirMatchesPathCheck builds a random tree around the standard one —
// directories, files, symlinks pointing anywhere, hard links, and extra
// read-deny entries named directly, through symlinks, or that are
// symlinks themselves — and walks it with the Dir API. Every verdict of a
// Dir (open a file, enter a directory, lstat a name) must be the verdict
// of the full path check on the same path, a name hidden from a listing
// must be one the path check refuses, a symlink is never followed, and no
// secret is ever read. The seed corpus runs as an ordinary test.
func FuzzDirMatchesPathCheck(f *testing.F) {
	for seed := range uint64(24) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		tr := newTreeIn(t, fastTempDir(t))
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		dirs := []string{tr.ws, tr.outside, tr.home, tr.p("home/.config"), tr.p("home/.ssh")}
		var files, all []string
		pick := func(s []string) string { return s[rng.IntN(len(s))] }
		comps := []string{"a", "b", "c", ".kube", ".x", "K"}
		for range 12 + rng.IntN(12) {
			d := filepath.Join(pick(dirs), pick(comps))
			if os.Mkdir(d, 0o755) == nil {
				dirs = append(dirs, d)
				all = append(all, d)
			}
		}
		for i := range 16 + rng.IntN(16) {
			p := filepath.Join(pick(dirs), fmt.Sprintf("f%d", i))
			content := "plain " + p
			if strings.HasPrefix(p, tr.p("home/.ssh")) {
				content = "SECRET KEY " + p // under a read-deny entry by construction
			}
			require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
			if !strings.HasPrefix(p, tr.p("home/.ssh")) {
				files = append(files, p)
			}
			all = append(all, p)
		}
		files = append(files, tr.p("home/.netrc")) // an entry itself: its hard links are caught
		all = append(all, dirs...)
		for i := range 8 + rng.IntN(8) {
			var target string
			switch rng.IntN(3) {
			case 0:
				target = pick(all)
			case 1:
				target = filepath.Join(pick(all), "..", pick(comps))
			default:
				target = pick(comps)
			}
			link := filepath.Join(pick(dirs), fmt.Sprintf("l%d", i))
			if os.Symlink(target, link) == nil {
				all = append(all, link)
			}
		}
		for i := range 4 {
			_ = os.Link(pick(files), filepath.Join(pick(dirs), fmt.Sprintf("h%d", i)))
		}
		cfg := tr.config()
		var cands []string // the new paths outside .ssh, links included
		for _, p := range all {
			if !strings.HasPrefix(p, tr.p("home/.ssh")) {
				cands = append(cands, p)
			}
		}
		for range 1 + rng.IntN(4) {
			e := pick(cands)
			if rng.IntN(3) == 0 {
				e = filepath.Join(e, pick(comps)) // often missing, sometimes through a symlink
			}
			cfg.ReadDeny = append(cfg.ReadDeny, e)
		}
		fence, err := fsfence.New(cfg)
		require.NoError(t, err)
		root, err := fence.OpenDir(tr.base)
		require.NoError(t, err)
		var dirsSeen, filesSeen int
		checkDirAgainstPaths(t, fence, root, &dirsSeen, &filesSeen)
		require.Positive(t, filesSeen)
		t.Logf("seed %d: %d directories, %d files; read-deny %v", seed, dirsSeen, filesSeen, cfg.ReadDeny)
	})
}

func checkDirAgainstPaths(t *testing.T, f *fsfence.Fence, d *fsfence.Dir, dirs, files *int) {
	t.Helper()
	defer d.Close()
	*dirs++
	entries, err := fsfence.ListAll(d)
	require.NoError(t, err)
	visible, err := d.ReadDir()
	require.NoError(t, err)
	shown := map[string]bool{}
	for _, e := range visible {
		shown[e.Name()] = true
	}
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(d.Path(), name)
		_, lerr := d.Lstat(name)
		_, plerr := f.Lstat(p)
		require.Equal(t, isDenied(plerr), isDenied(lerr), "lstat %s: dir %v, path %v", p, lerr, plerr)
		if !shown[name] {
			require.True(t, isDenied(plerr), "%s hidden but not refused by the path check", p)
		}
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			file, err := d.OpenFile(name)
			require.Nil(t, file)
			require.True(t, isDenied(err) || errors.Is(err, syscall.ELOOP), "open symlink %s: %v", p, err)
			sub, err := d.OpenDir(name)
			require.Nil(t, sub)
			require.True(t, isDenied(err) || errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR), "opendir symlink %s: %v", p, err)
		case e.IsDir():
			sub, err := d.OpenDir(name)
			pd, perr := f.OpenDir(p)
			if perr == nil {
				pd.Close()
			}
			require.Equal(t, isDenied(perr), isDenied(err), "opendir %s: dir %v, path %v", p, err, perr)
			if err == nil {
				checkDirAgainstPaths(t, f, sub, dirs, files)
			} else {
				require.False(t, shown[name] && !isDenied(err), "opendir %s: %v", p, err)
			}
		case e.Type().IsRegular():
			*files++
			file, err := d.OpenFile(name)
			pfile, perr := f.OpenFile(p)
			require.Equal(t, isDenied(perr), isDenied(err), "open %s: dir %v, path %v", p, err, perr)
			if err != nil {
				require.True(t, isDenied(err), "open %s: %v", p, err)
				continue
			}
			got, err := io.ReadAll(file)
			file.Close()
			require.NoError(t, err)
			want, err := io.ReadAll(pfile)
			pfile.Close()
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
			for _, s := range secrets {
				require.NotContains(t, string(got), s, "read a secret through %s", p)
			}
		}
	}
}
