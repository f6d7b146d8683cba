package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stoppedRebase makes a repository in dir with an interactive rebase
// stopped at a `break`, a pick and an exec line that touches canary still
// to do, and returns its gitdir.
func stoppedRebase(t *testing.T, dir, canary string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	gitOut(t, dir, "init", "-q")
	gitOut(t, dir, "commit", "-q", "--allow-empty", "-m", "one")
	gitOut(t, dir, "commit", "-q", "--allow-empty", "-m", "two")
	cmd := exec.Command("git", "-c", "user.name=t", "-c", "user.email=t@example.com", "rebase", "-q", "-i", "--exec", "touch "+canary, "HEAD~1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_SEQUENCE_EDITOR=sed -i 1ibreak")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.DirExists(t, filepath.Join(dir, ".git", "rebase-merge"), "the rebase stopped")
	return filepath.Join(dir, ".git")
}

// humanContinues is what the human does on seeing a rebase in progress.
func humanContinues(dir string) string {
	cmd := exec.Command("git", "-c", "user.name=h", "-c", "user.email=h@example.com", "rebase", "--continue")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_EDITOR=true")
	out, _ := cmd.CombinedOutput() // a broken rebase is fine; a payload run is not
	return string(out)
}

// TestDisarmRebase: the exec lines of a rebase todo that a command made or
// changed are not run by the human's `git rebase --continue`, which still
// finishes the rebase; a todo or rebase-merge that git would not have made
// is set aside; a todo that no command touched is left alone.
func TestDisarmRebase(t *testing.T) {
	base := t.TempDir()
	before := time.Now()
	n := 0
	setup := func(t *testing.T) (root, gitdir, canary string) {
		n++
		root = filepath.Join(base, fmt.Sprintf("repo%d", n))
		canary = filepath.Join(base, fmt.Sprintf("canary%d", n))
		return root, stoppedRebase(t, root, canary), canary
	}

	t.Run("control", func(t *testing.T) {
		root, _, canary := setup(t)
		humanContinues(root)
		require.FileExists(t, canary, "unconfined, the pending exec runs: the check can see it")
	})

	t.Run("made by a command", func(t *testing.T) {
		root, gitdir, canary := setup(t)
		todo := filepath.Join(gitdir, "rebase-merge", "git-rebase-todo")
		original := readFile(t, todo)
		changes, err := disarmRebase(root, gitdir, before)
		require.NoError(t, err)
		require.Equal(t, []Change{{Path: todo, What: "disarmed", Detail: "1 exec line(s) of a rebase in progress commented out"}}, changes)
		kept, _ := filepath.Glob(todo + disarmedSuffix + "-*")
		require.Len(t, kept, 1, "the todo as the command left it is kept")
		assert.Equal(t, original, readFile(t, kept[0]))

		out := humanContinues(root)
		assert.NoFileExists(t, canary, "the human's git ran the command's exec line:\n%s", out)
		assert.NoDirExists(t, filepath.Join(gitdir, "rebase-merge"), "the rebase finished:\n%s", out)
		assert.Contains(t, gitOut(t, root, "log", "--format=%s"), "two", "its pick was done")
	})

	t.Run("the human's own", func(t *testing.T) {
		root, gitdir, canary := setup(t)
		todo := filepath.Join(gitdir, "rebase-merge", "git-rebase-todo")
		original := readFile(t, todo)
		changes, err := disarmRebase(root, gitdir, time.Now().Add(time.Hour)) // no command since it was written
		require.NoError(t, err)
		assert.Empty(t, changes)
		assert.Equal(t, original, readFile(t, todo))
		humanContinues(root)
		assert.FileExists(t, canary, "the human's own exec line still runs")
	})

	for _, tc := range []struct {
		name, what string
		plant      func(t *testing.T, gitdir, elsewhere string) string // returns what is set aside
	}{
		{"a symlinked todo", "a rebase todo that git did not write", func(t *testing.T, gitdir, elsewhere string) string {
			todo := filepath.Join(gitdir, "rebase-merge", "git-rebase-todo")
			require.NoError(t, os.Rename(todo, elsewhere))
			require.NoError(t, os.Symlink(elsewhere, todo))
			return todo
		}},
		{"a hard-linked todo", "a rebase todo that git did not write", func(t *testing.T, gitdir, elsewhere string) string {
			todo := filepath.Join(gitdir, "rebase-merge", "git-rebase-todo")
			require.NoError(t, os.Link(todo, elsewhere))
			return todo
		}},
		{"a symlinked rebase-merge", "a rebase-merge that is not a directory", func(t *testing.T, gitdir, elsewhere string) string {
			dir := filepath.Join(gitdir, "rebase-merge")
			require.NoError(t, os.Rename(dir, elsewhere))
			require.NoError(t, os.Symlink(elsewhere, dir))
			return dir
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, gitdir, canary := setup(t)
			aside := tc.plant(t, gitdir, root+"-elsewhere")
			// Whenever it was planted: it is never git's.
			changes, err := disarmRebase(root, gitdir, time.Now().Add(time.Hour))
			require.NoError(t, err)
			require.Equal(t, []Change{{Path: aside, What: "disarmed", Detail: tc.what}}, changes)
			_, err = os.Lstat(aside + disarmedSuffix)
			require.NoError(t, err, "set aside, not deleted")
			out := humanContinues(root)
			assert.NoFileExists(t, canary, "the human's git ran the command's exec line:\n%s", out)
		})
	}
}

func TestCommentOutExecs(t *testing.T) {
	in := "pick 1a2b one\nexec make\n  x touch a\n\texec\tb\r\nexecute c\npick 3c4d exec\n# exec d\nbreak\nx"
	want := "pick 1a2b one\n" + execPrefix + "exec make\n" + execPrefix + "  x touch a\n" + execPrefix + "\texec\tb\r\n" +
		"execute c\npick 3c4d exec\n# exec d\nbreak\n" + execPrefix + "x"
	got, n := commentOutExecs([]byte(in))
	assert.Equal(t, want, string(got))
	assert.Equal(t, 4, n)
}
