package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/cordonhq/cordon/sandbox/internal/gitrepo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// guardWorld is a root with protected paths in every state a guard meets:
// a tree (hooks), a file (config), a missing name, a missing name beneath
// a missing directory.
func guardWorld(t *testing.T) (root string, set Set) {
	t.Helper()
	root = t.TempDir()
	must := func(err error) { t.Helper(); require.NoError(t, err) }
	must(os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755))
	must(os.WriteFile(filepath.Join(root, ".git", "hooks", "pre-commit.sample"), []byte("#!/bin/sh\n"), 0o755))
	must(os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n\tbare = false\n"), 0o640))
	set = Set{Root: root, Paths: []string{
		filepath.Join(root, ".git", "hooks"), filepath.Join(root, ".git", "config"),
		filepath.Join(root, ".envrc"), filepath.Join(root, ".config", "git"),
	}}
	return root, set
}

func restoreAll(t *testing.T, set Set) []Change {
	t.Helper()
	base, err := takeBaseline(set)
	require.NoError(t, err)
	return base.restoreAfter(t)
}

// restoreAfter is restore for tests that change the tree in between.
func (b *guardBaseline) restoreAfter(t *testing.T) []Change {
	t.Helper()
	c, err := b.restore()
	require.NoError(t, err)
	return c
}

func TestGuardUndoes(t *testing.T) {
	cases := []struct {
		name   string
		attack func(root string) error
		want   []Change
	}{
		{"a hook planted", func(root string) error {
			return os.WriteFile(filepath.Join(root, ".git", "hooks", "pre-commit"), []byte("evil"), 0o755)
		}, []Change{{What: "changed", Path: ".git/hooks"}}},
		{"config rewritten in place", func(root string) error {
			return os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n\tfsmonitor = evil\n"), 0o640)
		}, []Change{{What: "changed", Path: ".git/config"}}},
		{"config removed", func(root string) error {
			return os.Remove(filepath.Join(root, ".git", "config"))
		}, []Change{{What: "removed", Path: ".git/config"}}},
		{"a missing file made", func(root string) error {
			return os.WriteFile(filepath.Join(root, ".envrc"), []byte("evil"), 0o644)
		}, []Change{{What: "created", Path: ".envrc"}}},
		{"a missing tree made beneath a missing directory", func(root string) error {
			return os.MkdirAll(filepath.Join(root, ".config", "git", "hooks"), 0o755)
		}, []Change{{What: "created", Path: ".config/git"}}},
		{"a symlink on the way to a missing path", func(root string) error {
			evil := filepath.Join(root, "evil")
			if err := os.MkdirAll(filepath.Join(evil, "git"), 0o755); err != nil {
				return err
			}
			return os.Symlink(evil, filepath.Join(root, ".config"))
		}, []Change{{What: "redirected", Path: ".config"}}},
		{"the gitdir replaced by a new one", func(root string) error {
			if err := os.Rename(filepath.Join(root, ".git"), filepath.Join(root, ".git-old")); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(root, ".git", "hooks", "pre-commit"), []byte("evil"), 0o755)
			// A new gitdir gets the recorded hooks and config; the old one
			// moved away is the command's business.
		}, []Change{{What: "changed", Path: ".git/hooks"}, {What: "removed", Path: ".git/config"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, set := guardWorld(t)
			before := testenv.Snapshot(t, filepath.Join(root, ".git"))
			base, err := takeBaseline(set)
			require.NoError(t, err)
			require.NoError(t, c.attack(root))
			got := base.restoreAfter(t)
			for i := range c.want {
				c.want[i].Path = filepath.Join(root, c.want[i].Path)
			}
			assert.ElementsMatch(t, c.want, got)
			assertSameTree(t, before, testenv.Snapshot(t, filepath.Join(root, ".git")))
			assert.NoFileExists(t, filepath.Join(root, ".envrc"))
			assert.NoDirExists(t, filepath.Join(root, ".config", "git"))
			// Nothing to undo the second time.
			assert.Empty(t, restoreAll(t, set))
		})
	}
}

// assertSameTree compares snapshots by what lies there, not by inode.
func assertSameTree(t *testing.T, want, got map[string]string) {
	t.Helper()
	strip := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			if j := strings.LastIndex(v, " ino="); j >= 0 {
				v = v[:j]
			}
			out[k] = v
		}
		return out
	}
	assert.Equal(t, strip(want), strip(got))
}

// TestGuardKeepsModes: a restored file has its content and permission
// bits, and never the setuid bit a command set.
func TestGuardKeepsModes(t *testing.T) {
	root, set := guardWorld(t)
	cfg := filepath.Join(root, ".git", "config")
	base, err := takeBaseline(set)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(cfg, 0o4777))
	base.restoreAfter(t)
	fi, err := os.Stat(cfg)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode())
	data, _ := os.ReadFile(cfg)
	assert.Equal(t, "[core]\n\tbare = false\n", string(data))
}

// TestGuardTooLarge fails closed: a protected tree too large to copy is
// refused, never left unguarded.
func TestGuardTooLarge(t *testing.T) {
	root, set := guardWorld(t)
	old := maxGuardNodes
	maxGuardNodes = 5
	t.Cleanup(func() { maxGuardNodes = old })
	for i := range 6 {
		require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "hooks", string(rune('a'+i))), nil, 0o644))
	}
	_, err := takeBaseline(set)
	assert.ErrorIs(t, err, ErrTooLarge)
}

// eachGuardStore runs test on the store of a state directory and on the
// in-memory one.
func eachGuardStore(t *testing.T, test func(t *testing.T, s Store)) {
	for name, store := range map[string]func(t *testing.T) Store{
		"file": func(t *testing.T) Store { return fileStoreFor(t.TempDir()) },
		"mem":  func(*testing.T) Store { return memStore },
	} {
		t.Run(name, func(t *testing.T) { test(t, store(t)) })
	}
}

// TestGuardStoreOverlappingCalls: the state to go back to is what the
// first of overlapping calls saw, and only the last to end restores it —
// a call that starts while another's command has planted something must
// not take the plant for the baseline.
func TestGuardStoreOverlappingCalls(t *testing.T) {
	eachGuardStore(t, func(t *testing.T, s Store) {
		root, set := guardWorld(t)
		first, err := s.Begin(set)
		require.NoError(t, err)
		hook := filepath.Join(root, ".git", "hooks", "pre-commit")
		require.NoError(t, os.WriteFile(hook, []byte("evil"), 0o755)) // the first call's command
		second, err := s.Begin(set)
		require.NoError(t, err)
		got, err := first.End()
		require.NoError(t, err)
		assert.Empty(t, got, "a call that is not the last restores nothing")
		assert.FileExists(t, hook, "the second call still runs")
		got, err = second.End()
		require.NoError(t, err)
		assert.Equal(t, []Change{{Path: filepath.Join(root, ".git", "hooks"), What: "changed"}}, got)
		assert.NoFileExists(t, hook, "the plant was undone by the last call, from the first one's baseline")
		if fs, ok := s.(*fileGuardStore); ok {
			assertGuardDirEmpty(t, fs.dir)
		}
	})
}

// TestGuardStoreFirstEndsLast: a call that joined with more protected
// paths rewrote the baseline; the first call, ending last, restores those
// paths too, not only the ones it recorded (and keeps in memory).
func TestGuardStoreFirstEndsLast(t *testing.T) {
	eachGuardStore(t, func(t *testing.T, s Store) {
		root, set := guardWorld(t)
		first, err := s.Begin(set)
		require.NoError(t, err)
		more := set
		vscode := filepath.Join(root, ".vscode")
		more.Paths = append(slices.Clone(set.Paths), vscode)
		second, err := s.Begin(more)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(vscode, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(vscode, "tasks.json"), []byte("evil"), 0o644))
		envrc := filepath.Join(root, ".envrc")
		require.NoError(t, os.WriteFile(envrc, []byte("evil"), 0o644))

		got, err := second.End()
		require.NoError(t, err)
		assert.Empty(t, got, "a call that is not the last restores nothing")
		got, err = first.End()
		require.NoError(t, err)
		assert.ElementsMatch(t, []Change{{Path: envrc, What: "created"}, {Path: vscode, What: "created"}}, got)
		assert.NoFileExists(t, envrc)
		assert.NoDirExists(t, vscode, "the path only the joining call protected")
		if fs, ok := s.(*fileGuardStore); ok {
			assertGuardDirEmpty(t, fs.dir)
		}
	})
}

// TestRecoverGuards: a cordon killed mid-call leaves its baseline; the
// next start restores it.
func TestRecoverGuards(t *testing.T) {
	root, set := guardWorld(t)
	state := t.TempDir()
	h, err := fileStoreFor(state).Begin(set)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, ".envrc"), []byte("evil"), 0o644))
	h.(*fileHold).live.Close() // what the kernel does when cordon is killed
	got, err := Recover(state)
	require.NoError(t, err)
	assert.Equal(t, []Change{{Path: filepath.Join(root, ".envrc"), What: "created"}}, got)
	assert.NoFileExists(t, filepath.Join(root, ".envrc"))
	assertGuardDirEmpty(t, Dir(state))
}

// assertGuardDirEmpty: nothing of the guard stays on disk between calls
// but its directory, which the next call would make again.
func assertGuardDirEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if !errors.Is(err, fs.ErrNotExist) {
		require.NoError(t, err)
	}
	assert.Empty(t, entries, "no baseline or live file stays in %s between calls", dir)
}

// TestGuardStoreAuditsRepositoriesMadeBeforeAJoin: a repository that an
// earlier call's command made is new to the baseline, even though a call
// that joins afterwards finds it when its policy is resolved (and
// protects its hooks, as they are by then). Parallel tool calls, or a
// background process that holds the root, make such overlaps an ordinary
// thing for a model to arrange.
func TestGuardStoreAuditsRepositoriesMadeBeforeAJoin(t *testing.T) {
	eachGuardStore(t, func(t *testing.T, s Store) {
		root := t.TempDir()
		testenv.Git(t, root, "init", "-q")
		before, _, err := gitrepo.Find([]string{root}, nil)
		require.NoError(t, err)
		set := func(repos []gitrepo.Repo) Set {
			s := Set{Root: root, Repos: RepoIDs(repos)}
			for _, r := range repos {
				s.Paths = append(s.Paths, filepath.Join(r.GitDir, "hooks"), filepath.Join(r.GitDir, "config"))
			}
			return s
		}
		first, err := s.Begin(set(before))
		require.NoError(t, err)

		// The first call's command makes a repository, armed.
		x := filepath.Join(root, "x")
		hook := armedRepo(t, x)
		testenv.Git(t, x, "config", "core.fsmonitor", "./evil.sh")

		after, _, err := gitrepo.Find([]string{root}, nil)
		require.NoError(t, err)
		require.Len(t, after, 2)
		second, err := s.Begin(set(after))
		require.NoError(t, err)
		_, err = first.End()
		require.NoError(t, err)
		_, err = second.End()
		require.NoError(t, err)
		assert.NoFileExists(t, hook, "the hook a command planted in a repository it made")
		assert.NotContains(t, testenv.Git(t, x, "config", "--list", "--local"), "fsmonitor")
	})
}

// guardedRepo is a repository whose hooks and config a call guards: its
// root, and the call's hold (to end as the call would).
func guardedRepo(t *testing.T) (string, Hold) {
	t.Helper()
	root := t.TempDir()
	testenv.Git(t, root, "init", "-q")
	repos, _, err := gitrepo.Find([]string{root}, nil)
	require.NoError(t, err)
	set := Set{Root: root, Repos: RepoIDs(repos),
		Paths: []string{filepath.Join(root, ".git", "hooks"), filepath.Join(root, ".git", "config")}}
	h, err := memStore.Begin(set)
	require.NoError(t, err)
	return root, h
}

// plantHook writes an executable pre-commit hook in gitdir and returns its
// path.
func plantHook(t *testing.T, gitdir string) string {
	t.Helper()
	hook := filepath.Join(gitdir, "hooks", "pre-commit")
	require.NoError(t, os.MkdirAll(filepath.Dir(hook), 0o755))
	require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\nevil\n"), 0o755))
	return hook
}

// armedRepo makes dir a repository with a pre-commit hook, and returns the
// hook's path.
func armedRepo(t *testing.T, dir string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	testenv.Git(t, dir, "init", "-q")
	return plantHook(t, filepath.Join(dir, ".git"))
}

// TestGuardAuditsARepositoryMovedAway: a known gitdir that a command moves
// to another place keeps its identity; its hooks there were never guarded.
func TestGuardAuditsARepositoryMovedAway(t *testing.T) {
	root, h := guardedRepo(t)
	x := filepath.Join(root, "x")
	require.NoError(t, os.MkdirAll(x, 0o755))
	require.NoError(t, os.Rename(filepath.Join(root, ".git"), filepath.Join(x, ".git")))
	hook := plantHook(t, filepath.Join(x, ".git"))
	_, err := h.End()
	require.NoError(t, err)
	assert.NoFileExists(t, hook)
}

// TestProtectedPathsUndoneThoughMadeReadOnly: not as root, a command can
// take write access away from the directories it owns, which are also the
// user's, and so cordon's: the guard and the audit must still undo what it
// planted there. (Root ignores the mode bits: TestUnprivileged runs this
// as nobody, where it matters.)
func TestProtectedPathsUndoneThoughMadeReadOnly(t *testing.T) {
	root, h := guardedRepo(t)

	hook := plantHook(t, filepath.Join(root, ".git"))
	x := filepath.Join(root, "x")
	newHook := armedRepo(t, x)
	testenv.Git(t, x, "config", "core.fsmonitor", "evil")
	for _, d := range []string{filepath.Join(root, ".git", "hooks"), filepath.Join(root, ".git"), filepath.Join(x, ".git", "hooks"), filepath.Join(x, ".git"), x, root} {
		require.NoError(t, os.Chmod(d, 0o555))
	}
	t.Cleanup(func() {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	_, err := h.End()
	require.NoError(t, err)
	assert.NoFileExists(t, hook)
	assert.NoFileExists(t, newHook)
	assert.NotContains(t, testenv.Git(t, x, "config", "--list", "--local"), "fsmonitor")
}

// TestGuardSearchesTheWholeRootPastTheBound: when the policy's search for
// repositories stopped at its bound (a large tree, or directories an
// earlier call's command made by the thousand), the baseline and the
// audit search the whole root: a repository made beyond the bound is
// disarmed, one that was there already is left alone.
func TestGuardSearchesTheWholeRootPastTheBound(t *testing.T) {
	defer func(old int) { gitrepo.ScanMaxDirs = old }(gitrepo.ScanMaxDirs)
	gitrepo.ScanMaxDirs = 20
	root := t.TempDir()
	for i := range 30 {
		require.NoError(t, os.Mkdir(filepath.Join(root, fmt.Sprintf("a%02d", i)), 0o755))
	}
	humanHook := armedRepo(t, filepath.Join(root, "zzz", "human"))
	repos, incomplete, err := gitrepo.Find([]string{root}, nil)
	require.NoError(t, err)
	require.True(t, incomplete)
	require.Empty(t, repos, "the bounded search does not reach zzz")

	// All of it older than the baseline, as if made by an earlier call.
	defer func(old func() time.Time) { baselineClock = old }(baselineClock)
	baselineClock = func() time.Time { return time.Now().Add(gitrepo.ChangeTimeSlack + 3*time.Second) }
	h, err := memStore.Begin(Set{Root: root, Repos: RepoIDs(repos), Incomplete: incomplete})
	require.NoError(t, err)
	evilHook := armedRepo(t, filepath.Join(root, "zzz", "evil"))
	_, err = h.End()
	require.NoError(t, err)
	assert.NoFileExists(t, evilHook)
	assert.FileExists(t, humanHook, "the human's repository was there before")
}
