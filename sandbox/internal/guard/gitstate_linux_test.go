package guard

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/cordonhq/cordon/sandbox/internal/gitrepo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stoppedRebase makes a repository in dir with an interactive rebase
// stopped at a `break`, a pick and an exec line that touches canary still
// to do, and returns its gitdir.
func stoppedRebase(t *testing.T, dir, canary string) string {
	t.Helper()
	twoCommits(t, dir)
	startRebase(t, dir, canary)
	return filepath.Join(dir, ".git")
}

// twoCommits makes a repository in dir with two commits, "one" and "two".
func twoCommits(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	testenv.Git(t, dir, "init", "-q")
	testenv.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "one")
	testenv.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
}

// startRebase stops an interactive rebase of HEAD~1 at a `break`, with an
// exec line that touches canary to do.
func startRebase(t *testing.T, dir, canary string) {
	t.Helper()
	cmd := exec.Command("git", "-c", "user.name=t", "-c", "user.email=t@example.com", "rebase", "-q", "-i", "--exec", "touch "+canary, "HEAD~1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_SEQUENCE_EDITOR=sed -i 1ibreak")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// humanContinues is what the human does on seeing an operation in
// progress.
func humanContinues(dir string, op ...string) string {
	if len(op) == 0 {
		op = []string{"rebase", "--continue"}
	}
	cmd := exec.Command("git", append([]string{"-c", "user.name=h", "-c", "user.email=h@example.com"}, op...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_EDITOR=true")
	out, _ := cmd.CombinedOutput() // a broken rebase is fine; a payload run is not
	return string(out)
}

// TestDisarmGitStates: an unfinished rebase or cherry-pick that a command
// made or changed is set aside whole, so the human's --continue carries
// out nothing of it and the human's branch is as it was; one that no
// command touched is left alone, and its exec lines are the human's.
func TestDisarmGitStates(t *testing.T) {
	base := t.TempDir()
	n := 0
	world := func(t *testing.T) (root, canary string) {
		n++
		root = filepath.Join(base, fmt.Sprintf("ws%d", n))
		require.NoError(t, os.MkdirAll(root, 0o755))
		return root, filepath.Join(base, fmt.Sprintf("canary%d", n))
	}
	// repoWorld is a world with a repository of two commits in it.
	repoWorld := func(t *testing.T) (root, repo, canary string) {
		root, canary = world(t)
		repo = filepath.Join(root, "repo")
		twoCommits(t, repo)
		return root, repo, canary
	}
	// call is one command's guard: the fingerprints before it, the
	// command, the disarming after it.
	call := func(t *testing.T, root string, gitdirs []string, command func()) []Change {
		t.Helper()
		before := gitStates(gitStatePaths(root, gitdirs))
		command()
		changes, err := auditor{root: root}.disarmGitStates(gitStatePaths(root, gitdirs), before)
		require.NoError(t, err)
		return changes
	}
	requireSetAside := func(t *testing.T, changes []Change, paths ...string) {
		t.Helper()
		var got []string
		for _, c := range changes {
			assert.Equal(t, "disarmed", c.What)
			got = append(got, c.Path)
		}
		require.Equal(t, paths, got)
		for _, p := range paths {
			_, err := os.Lstat(p + DisarmedSuffix)
			require.NoError(t, err, "set aside, not deleted")
		}
	}

	t.Run("control", func(t *testing.T) {
		root, canary := world(t)
		stoppedRebase(t, filepath.Join(root, "repo"), canary)
		humanContinues(filepath.Join(root, "repo"))
		require.FileExists(t, canary, "unconfined, the pending exec runs: the check can see it")
	})

	t.Run("a rebase the command stopped", func(t *testing.T) {
		root, repo, canary := repoWorld(t)
		branch := testenv.Git(t, repo, "rev-parse", "HEAD")
		gitdir := filepath.Join(repo, ".git")
		changes := call(t, root, []string{gitdir}, func() { startRebase(t, repo, canary) })
		requireSetAside(t, changes, filepath.Join(gitdir, "rebase-merge"))
		out := humanContinues(repo)
		assert.NoFileExists(t, canary, "the human's git carried out the command's rebase:\n%s", out)
		assert.Equal(t, branch, testenv.Git(t, repo, "rev-parse", "main"), "the human's branch is as it was")
	})

	t.Run("the human's own, untouched", func(t *testing.T) {
		root, canary := world(t)
		repo := filepath.Join(root, "repo")
		gitdir := stoppedRebase(t, repo, canary)
		changes := call(t, root, []string{gitdir}, func() { testenv.Git(t, repo, "status") })
		assert.Empty(t, changes)
		humanContinues(repo)
		assert.FileExists(t, canary, "the human's own exec line is the human's")
	})

	// The human's own stopped rebase, which a command then changes.
	for _, tc := range []struct{ name, script string }{
		{"an exec line appended", `echo "exec touch $CANARY" >> .git/rebase-merge/git-rebase-todo`},
		// git runs git-merge-STRATEGY, a path into the work tree when it
		// has a slash, for a pick that is not a fast-forward.
		{"a strategy named", `mkdir -p git-merge-x && printf '#!/bin/sh\ntouch %s\nexit 1\n' "$CANARY" > git-merge-x/y && chmod +x git-merge-x/y && echo x/y > .git/rebase-merge/strategy`},
		{"the todo replaced by a symlink", `cp .git/rebase-merge/git-rebase-todo ../elsewhere && echo "exec touch $CANARY" >> ../elsewhere && rm .git/rebase-merge/git-rebase-todo && ln -s "$PWD/../elsewhere" .git/rebase-merge/git-rebase-todo`},
		{"rebase-merge replaced by a symlink", `mv .git/rebase-merge ../moved && echo "exec touch $CANARY" >> ../moved/git-rebase-todo && ln -s "$PWD/../moved" .git/rebase-merge`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, canary := world(t)
			repo := filepath.Join(root, "repo")
			// No exec line of the human's: whatever runs is the command's.
			require.NoError(t, os.MkdirAll(repo, 0o755))
			testenv.Git(t, repo, "init", "-q")
			testenv.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "one")
			require.NoError(t, os.WriteFile(filepath.Join(repo, "f"), []byte("two\n"), 0o644))
			testenv.Git(t, repo, "add", "f")
			testenv.Git(t, repo, "commit", "-q", "-m", "two")
			cmd := exec.Command("git", "-c", "user.name=t", "-c", "user.email=t@example.com", "rebase", "-q", "-i", "HEAD~1")
			cmd.Dir = repo
			cmd.Env = append(os.Environ(), "GIT_SEQUENCE_EDITOR=sed -i 1ibreak")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			// A commit beside the stop, so that the pick is no fast-forward.
			testenv.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "human")
			gitdir := filepath.Join(repo, ".git")
			changes := call(t, root, []string{gitdir}, func() {
				sh := exec.Command("sh", "-c", tc.script)
				sh.Dir = repo
				sh.Env = append(os.Environ(), "CANARY="+canary)
				out, err := sh.CombinedOutput()
				require.NoError(t, err, "%s", out)
			})
			requireSetAside(t, changes, filepath.Join(gitdir, "rebase-merge"))
			after := humanContinues(repo)
			assert.NoFileExists(t, canary, "the human's git ran what the command planted:\n%s", after)
		})
	}

	t.Run("moved away and back", func(t *testing.T) {
		// A command makes the state and hides it; a later command puts it
		// back, its files' change times from before that command began.
		root, repo, canary := repoWorld(t)
		gitdir := filepath.Join(repo, ".git")
		hidden := filepath.Join(gitdir, "stash-tmp")
		changes := call(t, root, []string{gitdir}, func() {
			startRebase(t, repo, canary)
			require.NoError(t, os.Rename(filepath.Join(gitdir, "rebase-merge"), hidden))
		})
		assert.Empty(t, changes, "nothing left in progress")
		changes = call(t, root, []string{gitdir}, func() {
			require.NoError(t, os.Rename(hidden, filepath.Join(gitdir, "rebase-merge")))
		})
		requireSetAside(t, changes, filepath.Join(gitdir, "rebase-merge"))
		humanContinues(repo)
		assert.NoFileExists(t, canary)
	})

	t.Run("a linked worktree elsewhere", func(t *testing.T) {
		// The human's worktree lies outside the workspace; its rebase
		// state lies in the workspace's gitdir.
		root, repo, canary := repoWorld(t)
		ext := root + "-ext"
		testenv.Git(t, repo, "worktree", "add", "-q", "-b", "ext", ext)
		gitdir := filepath.Join(repo, ".git")
		changes := call(t, root, []string{gitdir}, func() { startRebase(t, ext, canary) })
		requireSetAside(t, changes, filepath.Join(gitdir, "worktrees", filepath.Base(ext), "rebase-merge"))
		humanContinues(ext)
		assert.NoFileExists(t, canary)
	})

	t.Run("an earlier set-aside is kept", func(t *testing.T) {
		// What was set aside before may be the human's (a rebase's
		// autostash), and a tree a command planted under that name must
		// not stop the rename: it moves to a name of its own.
		root, repo, canary := repoWorld(t)
		gitdir := filepath.Join(repo, ".git")
		earlier := filepath.Join(gitdir, "rebase-merge"+DisarmedSuffix)
		require.NoError(t, os.MkdirAll(filepath.Join(earlier, "d"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(earlier, "d", "autostash"), []byte("work"), 0o644))
		changes := call(t, root, []string{gitdir}, func() { startRebase(t, repo, canary) })
		requireSetAside(t, changes, filepath.Join(gitdir, "rebase-merge"))
		kept, _ := filepath.Glob(earlier + "-*")
		require.Len(t, kept, 1)
		assert.Equal(t, "work", testenv.ReadFile(filepath.Join(kept[0], "d", "autostash")))
		humanContinues(repo)
		assert.NoFileExists(t, canary)
	})

	t.Run("a worktree no longer listed", func(t *testing.T) {
		// A command may make worktrees/ unlistable (git in the worktree
		// needs only search access); what the baseline saw is looked at.
		root, repo, canary := repoWorld(t)
		ext := root + "-ext"
		testenv.Git(t, repo, "worktree", "add", "-q", "-b", "ext", ext)
		gitdir := filepath.Join(repo, ".git")
		state := filepath.Join(gitdir, "worktrees", filepath.Base(ext), "rebase-merge")
		startRebase(t, ext, canary) // the human's own, in the baseline
		before := gitStates(gitStatePaths(root, []string{gitdir}))
		require.Contains(t, before, state)
		appendLine(t, filepath.Join(state, "git-rebase-todo"), "exec touch "+canary)
		// The end's listing of worktrees/ saw nothing.
		changes, err := auditor{root: root}.disarmGitStates(gitStatePaths(root, nil), before)
		require.NoError(t, err)
		requireSetAside(t, changes, state)
	})

	t.Run("a cherry-pick the command stopped", func(t *testing.T) {
		root, _ := world(t)
		repo := filepath.Join(root, "repo")
		require.NoError(t, os.MkdirAll(repo, 0o755))
		testenv.Git(t, repo, "init", "-q")
		testenv.Git(t, repo, "commit", "-q", "--allow-empty", "-m", "one")
		testenv.Git(t, repo, "checkout", "-q", "-b", "side")
		for _, c := range [][2]string{{"f", "c1"}, {"f", "c2"}, {"g", "c3"}} {
			require.NoError(t, os.WriteFile(filepath.Join(repo, c[0]), []byte(c[1]), 0o644))
			testenv.Git(t, repo, "add", c[0])
			testenv.Git(t, repo, "commit", "-q", "-m", c[1])
		}
		testenv.Git(t, repo, "checkout", "-q", "main")
		require.NoError(t, os.WriteFile(filepath.Join(repo, "f"), []byte("conflict"), 0o644))
		testenv.Git(t, repo, "add", "f")
		testenv.Git(t, repo, "commit", "-q", "-m", "conflicting f")
		gitdir := filepath.Join(repo, ".git")
		changes := call(t, root, []string{gitdir}, func() {
			out := humanContinues(repo, "cherry-pick", "main..side")
			require.DirExists(t, filepath.Join(gitdir, "sequencer"), "the cherry-pick stopped: %s", out)
		})
		requireSetAside(t, changes, filepath.Join(gitdir, "sequencer"))
		testenv.Git(t, repo, "checkout", "-q", "--theirs", "f")
		testenv.Git(t, repo, "add", "f")
		humanContinues(repo, "cherry-pick", "--continue")
		assert.NotContains(t, testenv.Git(t, repo, "log", "--format=%s", "main"), "c3", "the picks it had left are not carried out")
	})
}

// TestDisarmGitStatesOfANewRepository: the state of a repository a command
// made is the command's whatever it holds.
func TestDisarmGitStatesOfANewRepository(t *testing.T) {
	root := t.TempDir()
	gitdir := stoppedRebase(t, filepath.Join(root, "new"), filepath.Join(t.TempDir(), "canary"))
	changes, err := auditor{root: root}.disarm(gitrepo.Repo{Worktree: filepath.Join(root, "new"), GitDir: gitdir, CommonDir: gitdir}, nil)
	require.NoError(t, err)
	var paths []string
	for _, c := range changes {
		paths = append(paths, c.Path)
	}
	assert.Contains(t, paths, filepath.Join(gitdir, "rebase-merge"))
	assert.True(t, strings.Contains(fmt.Sprint(changes), "unfinished rebase"))
}

func appendLine(t *testing.T, file, line string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(line + "\n")
	require.NoError(t, errors.Join(err, f.Close()))
}

// TestGitStateTooLargeToLookAt: state with more entries than a fingerprint
// takes counts as changed, even against a baseline of the same bytes (one
// taken by another cordon process).
func TestGitStateTooLargeToLookAt(t *testing.T) {
	root := t.TempDir()
	gitdir := filepath.Join(root, "repo", ".git")
	state := filepath.Join(gitdir, "rebase-merge")
	require.NoError(t, os.MkdirAll(state, 0o755))
	for i := range maxStateEntries {
		require.NoError(t, os.WriteFile(filepath.Join(state, fmt.Sprint(i)), nil, 0o644))
	}
	paths := gitStatePaths(root, []string{gitdir})
	before := gitStates(paths)
	changes, err := auditor{root: root}.disarmGitStates(paths, before)
	require.NoError(t, err)
	require.Len(t, changes, 1)
	assert.NoDirExists(t, state)
	assert.DirExists(t, state+DisarmedSuffix)
}
