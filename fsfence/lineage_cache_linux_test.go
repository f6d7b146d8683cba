package fsfence_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cordonhq/cordon/fsfence"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The read check remembers the lineage of each directory it saw by path
// (lineage_cache.go). These tests change what a remembered path leads to,
// in the two ways that could make a remembered lineage miss a read-deny
// directory, and read through it again.

// TestLineageCacheSeesMountsMadeLater: a read-deny directory mounted over a
// directory whose files were read before is still refused beneath it. The
// mount is a new one, and the lineage is remembered per mount.
func TestLineageCacheSeesMountsMadeLater(t *testing.T) {
	tr := newTree(t)
	before := snapshot(t, tr.base)
	out := inMountNamespace(t, "lineage-cache-mount", tr.base)
	assert.Equal(t, "before: allowed\nmounted: denied: on the read-deny list\nlisted: denied: on the read-deny list\nunmounted: allowed\n", out)
	require.Equal(t, before, snapshot(t, tr.base))
}

// TestLineageCacheRenewedWithTheEntries: a read-deny entry reached through
// a bind mount (so no path of it names the directory that it denies) moves
// onto a directory above files read before. The entry's change renews the
// matcher, and with it every remembered lineage.
func TestLineageCacheRenewedWithTheEntries(t *testing.T) {
	base := fastTempDir(t)
	for _, d := range []string{"ws/x/sub", "ws/secret/sub", "alias"} {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	for _, f := range []string{"ws/x/sub/f", "ws/secret/sub/f"} {
		require.NoError(t, os.WriteFile(filepath.Join(base, f), []byte(f), 0o644))
	}
	require.NoError(t, os.Symlink("secret", filepath.Join(base, "ws/entry")))
	out := inMountNamespace(t, "lineage-cache-entries", base)
	assert.Equal(t, "plain before: allowed\nsecret before: denied: on the read-deny list\nafter the move: denied: on the read-deny list\n", out)
}

func reportRead(what string, err error) {
	var de *fsfence.DeniedError
	switch {
	case errorsAs(err, &de):
		fmt.Printf("%s: denied: %s\n", what, de.Reason)
	case err != nil:
		fmt.Printf("%s: error: %v\n", what, err)
	default:
		fmt.Printf("%s: allowed\n", what)
	}
}

func readVia(f *fsfence.Fence, p string) error {
	file, err := f.OpenFile(p)
	if err == nil {
		file.Close()
	}
	return err
}

func init() {
	helpers["lineage-cache-mount"] = func(args []string) int {
		tr := &tree{base: args[0], ws: filepath.Join(args[0], "ws"), home: filepath.Join(args[0], "home"), outside: filepath.Join(args[0], "outside")}
		fail := func(err error) int { fmt.Fprintln(os.Stderr, err); return 3 }
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fail(err)
		}
		f, err := fsfence.New(tr.config())
		if err != nil {
			return fail(err)
		}
		reportRead("before", readVia(f, tr.p("ws/sub/file.txt")))
		if err := unix.Mount(tr.p("home/.ssh"), tr.p("ws/sub"), "", unix.MS_BIND, ""); err != nil {
			return fail(err)
		}
		reportRead("mounted", readVia(f, tr.p("ws/sub/id_rsa")))
		_, err = f.ReadDir(tr.p("ws/sub"))
		reportRead("listed", err)
		if err := unix.Unmount(tr.p("ws/sub"), 0); err != nil {
			return fail(err)
		}
		reportRead("unmounted", readVia(f, tr.p("ws/sub/file.txt")))
		return 0
	}
	helpers["lineage-cache-entries"] = func(args []string) int {
		p := func(rel string) string { return filepath.Join(args[0], rel) }
		fail := func(err error) int { fmt.Fprintln(os.Stderr, err); return 3 }
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fail(err)
		}
		if err := unix.Mount(p("ws"), p("alias"), "", unix.MS_BIND, ""); err != nil {
			return fail(err)
		}
		// The entry names the workspace's "entry" through the alias: it
		// denies whatever that symlink points to, under a path that shares
		// nothing with the workspace's.
		f, err := fsfence.New(fsfence.Config{WritableRoots: []string{p("ws")}, ReadDeny: []string{p("alias/entry")}})
		if err != nil {
			return fail(err)
		}
		reportRead("plain before", readVia(f, p("ws/x/sub/f")))
		reportRead("secret before", readVia(f, p("ws/secret/sub/f")))
		// The denied directory takes x's place, x's sub moves into it, and
		// the entry follows it: ws/x/sub is the same path, now beneath it.
		steps := []func() error{
			func() error { return os.Rename(p("ws/x"), p("ws/old")) },
			func() error { return os.Rename(p("ws/secret"), p("ws/x")) },
			func() error { return os.RemoveAll(p("ws/x/sub")) },
			func() error { return os.Rename(p("ws/old/sub"), p("ws/x/sub")) },
			func() error { return os.Remove(p("ws/entry")) },
			func() error { return os.Symlink("x", p("ws/entry")) },
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return fail(err)
			}
		}
		reportRead("after the move", readVia(f, p("ws/x/sub/f")))
		return 0
	}
}
