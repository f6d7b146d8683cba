//go:build unix

package fsfence_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordonhq/cordon/fsfence"
)

// helperEnv switches the test binary into a helper child process (the
// go-landlock lltest pattern): some tests need a process they can kill, or
// one with its own mount namespace.
const helperEnv = "FSFENCE_TEST_HELPER"

// helpers are the child modes, registered by the platform test files.
var helpers = map[string]func(args []string) int{}

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		h, ok := helpers[mode]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown helper %q\n", mode)
			os.Exit(2)
		}
		os.Exit(h(os.Args[1:]))
	}
	// Directory modes in the expectations below assume the usual umask.
	syscall.Umask(0o022)
	os.Exit(m.Run())
}

// helperCmd is a command re-executing this test binary in helper mode.
func helperCmd(t *testing.T, mode string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	cmd.Stderr = os.Stderr
	return cmd
}

// tree is a prepared file system: a workspace (the writable root), a
// prefix sibling, an outside directory, a fake home with credentials, and
// symlinks of every kind pointing in and out.
type tree struct {
	base, ws, outside, home string
}

func newTree(t testing.TB) *tree {
	t.Helper()
	return newTreeIn(t, t.TempDir())
}

// newTreeIn builds the tree in dir (which the caller cleans up).
func newTreeIn(t testing.TB, dir string) *tree {
	t.Helper()
	base, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	tr := &tree{
		base:    base,
		ws:      filepath.Join(base, "ws"),
		outside: filepath.Join(base, "outside"),
		home:    filepath.Join(base, "home"),
	}
	files := []struct {
		path, content string
		mode          fs.FileMode
	}{
		{"ws/sub/file.txt", "sub", 0o644},
		{"ws/existing.txt", "old", 0o644},
		{"ws/script.sh", "#!/bin/sh\necho hi\n", 0o755},
		{"ws/notes.txt", "notes", 0o644},
		{"ws/.git/config", "[core]\n", 0o644},
		{"ws/.git/HEAD", "ref: refs/heads/main\n", 0o644},
		{"ws/.git/hooks/pre-push", "#!/bin/sh\n", 0o755},
		{"ws-evil/victim.txt", "victim", 0o644},
		{"outside/target.txt", "outside", 0o644},
		{"home/.ssh/id_rsa", "SECRET KEY", 0o600},
		{"home/.aws/credentials", "AWS SECRET", 0o600},
		{"home/.netrc", "machine example password NETRC", 0o600},
		{"home/.config/cordon/config.toml", "mode = \"read-only\"\n", 0o644},
	}
	for _, f := range files {
		p := filepath.Join(base, f.path)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(f.content), f.mode))
		require.NoError(t, os.Chmod(p, f.mode))
	}
	links := []struct{ path, target string }{
		{"ws/linkout", tr.outside},                                      // absolute, to a directory outside
		{"ws/linkfile", filepath.Join(tr.outside, "target.txt")},        // absolute, to a file outside
		{"ws/relout", "../outside"},                                     // relative escape
		{"ws/sub/up", "../../outside"},                                  // relative escape from deeper
		{"ws/absin", filepath.Join(tr.ws, "sub")},                       // absolute, stays inside
		{"ws/relin", "sub"},                                             // relative, stays inside
		{"ws/gitalias", ".git"},                                         // alias of a protected parent
		{"ws/cfgalias", filepath.Join(tr.ws, ".git", "config")},         // alias of a protected file
		{"ws/.profile", "notes.txt"},                                    // a protected path that is a symlink
		{"ws/loop", "loop"},                                             // a loop
		{"ws/procroot", "/proc/self/root" + tr.outside},                 // a magic link on the way out
		{"ws/sshlink", filepath.Join(tr.home, ".ssh", "id_rsa")},        // to a read-deny file
		{"ws/sshdir", filepath.Join(tr.home, ".ssh")},                   // to a read-deny directory
		{"ws/dangling", filepath.Join(tr.outside, "new-from-dangling")}, // dangling, outside
	}
	for _, l := range links {
		require.NoError(t, os.Symlink(l.target, filepath.Join(base, l.path)))
	}
	// Another name for a protected file.
	require.NoError(t, os.Link(tr.p("ws/.git/config"), tr.p("ws/config-hardlink")))
	return tr
}

func (tr *tree) p(rel string) string { return filepath.Join(tr.base, rel) }

func (tr *tree) config() fsfence.Config {
	return fsfence.Config{
		WritableRoots: []string{tr.ws},
		Protected: []string{
			tr.p("ws/.git/hooks"), tr.p("ws/.git/config"), tr.p("ws/.cordon"),
			tr.p("ws/.bashrc"), tr.p("ws/.profile"), tr.p("ws/.vscode"),
			tr.p("home/.config/cordon"),
		},
		ReadDeny: []string{tr.p("home/.ssh"), tr.p("home/.aws"), tr.p("home/.netrc")},
	}
}

func (tr *tree) fence(t testing.TB) *fsfence.Fence {
	t.Helper()
	f, err := fsfence.New(tr.config())
	require.NoError(t, err)
	return f
}

// snapshot describes every object under dir without following symlinks:
// type, permission bits, and content digest or link target. Two equal
// snapshots mean nothing was written, created, removed or left behind.
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link " + target
		case fi.IsDir():
			out[rel] = fmt.Sprintf("dir %o", fi.Mode().Perm())
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fileDesc(fi.Mode().Perm(), data)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

func fileDesc(perm fs.FileMode, data []byte) string {
	sum := sha256.Sum256(data)
	return fmt.Sprintf("file %o %s", perm, hex.EncodeToString(sum[:8]))
}

// requireDenied asserts a fence refusal with the given reason.
func requireDenied(t testing.TB, err error, reason fsfence.Reason) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, fsfence.ErrDenied, "want a denial, got %v", err)
	var de *fsfence.DeniedError
	require.True(t, errors.As(err, &de))
	if reason != "" {
		require.Equal(t, reason, de.Reason, "error: %v", err)
	}
}

// tempLeftovers lists cordon temporary files under dir.
func tempLeftovers(t testing.TB, dir string) []string {
	t.Helper()
	var left []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".cordon-") && strings.HasSuffix(d.Name(), ".tmp") {
			left = append(left, p)
		}
		return nil
	})
	return left
}

func ownerOf(t testing.TB, p string) (uid, gid int) {
	t.Helper()
	fi, err := os.Stat(p)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	return int(st.Uid), int(st.Gid)
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
