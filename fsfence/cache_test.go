//go:build unix

package fsfence_test

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordonhq/cordon/fsfence"
)

// TestWarmFenceRefusesLaterAliases: a fence keeps its entries resolved
// between calls. An alias of a protected or read-deny path made after that
// resolution — a new symlink, an entry's parent replaced by a symlink, an
// entry created later as a symlink, a hard link to a replaced entry — is
// refused by the warm fence exactly as by a fence built afterwards, and
// what stopped being an entry is no longer refused either.
func TestWarmFenceRefusesLaterAliases(t *testing.T) {
	tests := []warmFenceCase{
		{
			name: "symlink in a writable root to a read-deny directory",
			change: func(t *testing.T, tr *tree) {
				require.NoError(t, os.Symlink(tr.p("home/.ssh"), tr.p("ws/newssh")))
			},
			read:  []string{"ws/newssh", "ws/newssh/id_rsa"},
			write: []string{"ws/newssh/id_rsa", "ws/newssh/new"},
		},
		{
			name: "symlink in a writable root to a protected directory",
			change: func(t *testing.T, tr *tree) {
				require.NoError(t, os.Symlink(".git/hooks", tr.p("ws/newhooks")))
				require.NoError(t, os.Symlink(tr.p("home/.config"), tr.p("ws/newconfig")))
			},
			write: []string{"ws/newhooks/pre-commit", "ws/newhooks/pre-push", "ws/newconfig/cordon/config.toml"},
		},
		{
			name: "protected entries' parent replaced by a symlink to a new directory",
			change: func(t *testing.T, tr *tree) {
				require.NoError(t, os.Rename(tr.p("ws/.git"), tr.p("ws/oldgit")))
				require.NoError(t, os.MkdirAll(tr.p("ws/newgit"), 0o755))
				require.NoError(t, os.WriteFile(tr.p("ws/newgit/config"), []byte("[core]\n"), 0o644))
				require.NoError(t, os.Symlink("newgit", tr.p("ws/.git")))
			},
			write: []string{"ws/newgit/hooks/pre-commit", "ws/newgit/hooks", "ws/newgit/config", "ws/.git/hooks/x"},
			probe: []string{"ws/oldgit/hooks/pre-push", "ws/oldgit/config", "ws/newgit/HEAD"},
		},
		{
			name: "read-deny entry's parent replaced by a symlink to a new directory",
			change: func(t *testing.T, tr *tree) {
				require.NoError(t, os.MkdirAll(tr.p("ws/home2/.aws"), 0o755))
				require.NoError(t, os.WriteFile(tr.p("ws/home2/.aws/credentials"), []byte("AWS SECRET 2"), 0o600))
				require.NoError(t, os.Rename(tr.home, tr.p("home-old")))
				require.NoError(t, os.Symlink(tr.p("ws/home2"), tr.home))
			},
			read:  []string{"ws/home2/.aws", "ws/home2/.aws/credentials"},
			write: []string{"ws/home2/.aws/credentials", "ws/home2/.ssh/id_rsa", "ws/home2/.netrc"},
			probe: []string{"home-old/.aws/credentials", "home-old/.ssh/id_rsa", "home-old/.netrc"},
		},
		{
			name: "entries created later as symlinks",
			change: func(t *testing.T, tr *tree) {
				require.NoError(t, os.MkdirAll(tr.p("ws/kube-real"), 0o755))
				require.NoError(t, os.WriteFile(tr.p("ws/kube-real/config"), []byte("KUBE SECRET"), 0o600))
				require.NoError(t, os.Symlink(tr.p("ws/kube-real"), tr.p("home/.kube")))
				require.NoError(t, os.Mkdir(tr.p("ws/idea-real"), 0o755))
				require.NoError(t, os.Symlink("idea-real", tr.p("ws/.idea")))
			},
			read:  []string{"ws/kube-real", "ws/kube-real/config"},
			write: []string{"ws/kube-real/config", "ws/kube-real/new", "ws/idea-real/workspace.xml"},
		},
		{
			name: "entries replaced by new files, then hard-linked",
			change: func(t *testing.T, tr *tree) {
				for _, p := range []string{"home/.netrc", "ws/.git/config"} {
					require.NoError(t, os.WriteFile(tr.p(p+".new"), []byte("NETRC [core] 2"), 0o600))
					require.NoError(t, os.Rename(tr.p(p+".new"), tr.p(p)))
				}
				require.NoError(t, os.Link(tr.p("home/.netrc"), tr.p("ws/netrc-link")))
				require.NoError(t, os.Link(tr.p("ws/.git/config"), tr.p("ws/config-link")))
			},
			read:  []string{"ws/netrc-link"},
			write: []string{"ws/netrc-link", "ws/config-link"},
			probe: []string{"ws/config-hardlink"}, // a link to the old config: no longer an entry
		},
	}
	for _, validation := range []string{"watched", "looked-again"} {
		t.Run(validation, func(t *testing.T) {
			if validation == "looked-again" {
				t.Cleanup(fsfence.LookAgain())
			}
			warmFenceCases(t, tests, validation == "watched" && runtime.GOOS == "linux")
		})
	}
}

type warmFenceCase struct {
	name   string
	change func(t *testing.T, tr *tree)
	read   []string // now refused for reading (they exist)
	write  []string // now refused for writing
	probe  []string // decided as a fresh fence decides
}

func warmFenceCases(t *testing.T, tests []warmFenceCase, watched bool) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			cfg := tr.config()
			cfg.ReadDeny = append(cfg.ReadDeny, tr.p("home/.kube"))
			cfg.Protected = append(cfg.Protected, tr.p("ws/.idea"))
			f, err := fsfence.New(cfg)
			require.NoError(t, err)
			all := append(append(append([]string{}, tc.read...), tc.write...), tc.probe...)
			// Warm both caches, asking about every path of the case first.
			for _, p := range append(all, "ws/notes.txt") {
				_ = f.CheckRead(tr.p(p))
				_ = f.CheckWrite(tr.p(p))
			}
			reads, writes := fsfence.EntriesCached(f)
			require.True(t, reads && writes, "the entries must be cached before the change")
			require.Equal(t, watched, fsfence.EntriesWatched(f), "how the cache is validated")

			tc.change(t, tr)
			fresh, err := fsfence.New(cfg)
			require.NoError(t, err)
			before := snapshot(t, tr.base)
			for _, p := range tc.read {
				requireDenied(t, f.CheckRead(tr.p(p)), fsfence.ReasonReadDeny)
				file, err := f.OpenFile(tr.p(p))
				requireDenied(t, err, fsfence.ReasonReadDeny)
				require.Nil(t, file)
			}
			for _, p := range tc.write {
				requireDenied(t, f.CheckWrite(tr.p(p)), "")
				_, err := f.WriteFile(tr.p(p), []byte("evil"))
				requireDenied(t, err, "")
			}
			require.Equal(t, before, snapshot(t, tr.base), "a refused write changed something")
			for _, p := range all {
				require.Equal(t, isDenied(fresh.CheckRead(tr.p(p))), isDenied(f.CheckRead(tr.p(p))), "read %s", p)
				require.Equal(t, isDenied(fresh.CheckWrite(tr.p(p))), isDenied(f.CheckWrite(tr.p(p))), "write %s", p)
			}
		})
	}
}

func isDenied(err error) bool { return errors.Is(err, fsfence.ErrDenied) }

// TestEntriesChangingDuringReads: while one goroutine keeps creating and
// removing a read-deny entry as a symlink to a workspace directory, others
// keep reading through one fence. The credentials are refused throughout,
// and an ordinary file is read throughout.
func TestEntriesChangingDuringReads(t *testing.T) {
	tr := newTreeIn(t, fastTempDir(t))
	cfg := tr.config()
	kube := tr.p("home/.kube")
	cfg.ReadDeny = append(cfg.ReadDeny, kube)
	f, err := fsfence.New(cfg)
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(tr.p("ws/kube-real"), 0o755))
	require.NoError(t, os.WriteFile(tr.p("ws/kube-real/config"), []byte("KUBE"), 0o644))

	var stop atomic.Bool
	var flipper, readers sync.WaitGroup
	flipper.Go(func() {
		for !stop.Load() {
			_ = os.Symlink(tr.p("ws/kube-real"), kube)
			_ = os.Remove(kube)
		}
	})
	for range 4 {
		readers.Go(func() {
			for range 300 {
				if _, err := f.Stat(tr.p("home/.ssh/id_rsa")); !isDenied(err) {
					t.Errorf("read-deny file not refused: %v", err)
				}
				if err := f.CheckRead(tr.p("ws/notes.txt")); err != nil {
					t.Errorf("ordinary file refused: %v", err)
				}
				_ = f.CheckRead(tr.p("ws/kube-real/config")) // either, depending on the moment
			}
		})
	}
	readers.Wait()
	stop.Store(true)
	flipper.Wait()

	// Settled: the entry exists again, so its target is refused.
	require.NoError(t, os.Symlink(tr.p("ws/kube-real"), kube))
	requireDenied(t, f.CheckRead(tr.p("ws/kube-real/config")), fsfence.ReasonReadDeny)
	require.NoError(t, os.Remove(kube))
	require.NoError(t, f.CheckRead(tr.p("ws/kube-real/config")))
}
