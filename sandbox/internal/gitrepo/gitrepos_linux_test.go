package gitrepo

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProtectedRepositoryInAnUnlistableDirectory: a directory its owner
// may enter but not list (mode 0311) still has its .git looked at, as git
// would find it there. Root lists it anyway; TestUnprivileged runs this as
// nobody, where the listing fails.
func TestProtectedRepositoryInAnUnlistableDirectory(t *testing.T) {
	ws := t.TempDir()
	locked := filepath.Join(ws, "locked")
	require.NoError(t, os.MkdirAll(filepath.Join(locked, ".git", "hooks"), 0o755))
	require.NoError(t, os.Chmod(locked, 0o311))
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	repos, _, err := Find([]string{ws}, nil)
	require.NoError(t, err)
	require.Len(t, repos, 1)
	assert.Equal(t, filepath.Join(locked, ".git"), repos[0].GitDir)
}

// TestRepositoriesGitFindsAtTheDepthLimit: the search looks at the
// directories on its last level for a .git without listing them, and for
// what makes a directory a gitdir too.
func TestRepositoriesGitFindsAtTheDepthLimit(t *testing.T) {
	ws := t.TempDir()
	handlers := filepath.Join(ws, "pkg", "api", "internal", "handlers") // depth 4
	require.NoError(t, os.MkdirAll(handlers, 0o755))
	testenv.Git(t, handlers, "init", "-q", "--bare")
	repos, _, err := Find([]string{ws}, nil)
	require.NoError(t, err)
	require.Len(t, repos, 1)
	assert.Equal(t, handlers, repos[0].GitDir)
}

// linkedRepo makes a repository with one commit at rel beneath ws and
// returns its HEAD, for a gitlink to name.
func linkedRepo(t *testing.T, ws, rel string) string {
	t.Helper()
	dir := filepath.Join(ws, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	testenv.Git(t, dir, "init", "-q")
	testenv.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "s")
	return strings.TrimSpace(testenv.Git(t, dir, "rev-parse", "HEAD"))
}

func gitdirsOf(t *testing.T, ws string) []string {
	t.Helper()
	repos, _, err := Find([]string{ws}, nil)
	require.NoError(t, err)
	var out []string
	for _, r := range repos {
		out = append(out, r.GitDir)
	}
	return out
}

// TestRepositoriesGitlinksNameHoweverTheIndexIsKept: the index git status
// reads may be a symlink to another file, or split into a shared file; a
// gitlink there is found all the same, at every search (nothing of an
// earlier listing is kept).
func TestRepositoriesGitlinksNameHoweverTheIndexIsKept(t *testing.T) {
	t.Run("symlinked", func(t *testing.T) {
		ws := t.TempDir()
		testenv.Git(t, ws, "init", "-q")
		deep := filepath.Join(ws, "node_modules", "evil", ".git")
		head := linkedRepo(t, ws, "node_modules/evil")
		assert.NotContains(t, gitdirsOf(t, ws), deep)
		testenv.Git(t, ws, "update-index", "--add", "--cacheinfo", "160000,"+head+",other") // an index file to copy
		data, err := os.ReadFile(filepath.Join(ws, ".git", "index"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(ws, ".git", "idx2"), data, 0o644))
		require.NoError(t, os.Remove(filepath.Join(ws, ".git", "index")))
		require.NoError(t, os.Symlink("idx2", filepath.Join(ws, ".git", "index")))
		assert.NotContains(t, gitdirsOf(t, ws), deep)
		cmd := exec.Command("git", "update-index", "--add", "--cacheinfo", "160000,"+head+",node_modules/evil")
		cmd.Dir, cmd.Env = ws, append(os.Environ(), "GIT_INDEX_FILE=.git/idx2")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, gitdirsOf(t, ws), deep)
	})
	t.Run("split", func(t *testing.T) {
		ws := t.TempDir()
		testenv.Git(t, ws, "init", "-q")
		head := linkedRepo(t, ws, "a/b/c/d/e/deep")
		testenv.Git(t, ws, "update-index", "--add", "--cacheinfo", "160000,"+head+",a/b/c/d/e/deep")
		testenv.Git(t, ws, "update-index", "--split-index")
		shared, _ := filepath.Glob(filepath.Join(ws, ".git", "sharedindex.*"))
		require.NotEmpty(t, shared, "the gitlink now lies in the shared index")
		assert.Contains(t, gitdirsOf(t, ws), filepath.Join(ws, "a", "b", "c", "d", "e", "deep", ".git"))
	})
}

// TestRepositoriesEverywhereWhenGitlinksAreUnknown: a sparse index holds
// directories that git does not expand to list (and the command's git
// could fail or take too long): every .git at any depth is then searched.
func TestRepositoriesEverywhereWhenGitlinksAreUnknown(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "a"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "b", "c"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a", "x"), []byte("1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "b", "c", "y"), []byte("2\n"), 0o644))
	testenv.Git(t, ws, "init", "-q")
	testenv.Git(t, ws, "add", ".")
	testenv.Git(t, ws, "commit", "-q", "-m", "i")
	testenv.Git(t, ws, "sparse-checkout", "set", "--cone", "a")
	testenv.Git(t, ws, "config", "index.sparse", "true")
	testenv.Git(t, ws, "sparse-checkout", "reapply")
	linkedRepo(t, ws, "x/y/z/w/v/deep") // 6 down, linked from nowhere
	assert.Contains(t, gitdirsOf(t, ws), filepath.Join(ws, "x", "y", "z", "w", "v", "deep", ".git"))
}

// TestGitlinkListingIsKeptOnlyWhileTheIndexHolds: an index that has not
// changed for a while is not listed again; a change of the index in place,
// of the file a symlinked index leads to, or of a shared index file is
// seen at the next search.
func TestGitlinkListingIsKeptOnlyWhileTheIndexHolds(t *testing.T) {
	ws := t.TempDir()
	testenv.Git(t, ws, "init", "-q")
	head := linkedRepo(t, ws, "node_modules/evil")
	deep := filepath.Join(ws, "node_modules", "evil", ".git")
	gitdir := filepath.Join(ws, ".git")
	testenv.Git(t, ws, "update-index", "--add", "--cacheinfo", "160000,"+head+",other")
	data, err := os.ReadFile(filepath.Join(gitdir, "index"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(gitdir, "idx2"), data, 0o644))
	require.NoError(t, os.Remove(filepath.Join(gitdir, "index")))
	require.NoError(t, os.Symlink("idx2", filepath.Join(gitdir, "index")))
	time.Sleep(ChangeTimeSlack + 200*time.Millisecond) // let the index settle, as an unchanged one has

	before := GitlinkListings.Load()
	assert.NotContains(t, gitdirsOf(t, ws), deep)
	assert.NotContains(t, gitdirsOf(t, ws), deep)
	assert.Equal(t, int64(1), GitlinkListings.Load()-before, "a settled index is listed once")

	// The file the symlink leads to, rewritten in place.
	cmd := exec.Command("git", "update-index", "--add", "--cacheinfo", "160000,"+head+",node_modules/evil")
	cmd.Dir, cmd.Env = ws, append(os.Environ(), "GIT_INDEX_FILE=.git/idx3")
	require.NoError(t, os.WriteFile(filepath.Join(gitdir, "idx3"), data, 0o644))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	linked, err := os.ReadFile(filepath.Join(gitdir, "idx3"))
	require.NoError(t, err)
	f, err := os.OpenFile(filepath.Join(gitdir, "idx2"), os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	_, err = f.Write(linked)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Contains(t, gitdirsOf(t, ws), deep)
}

// BenchmarkFindRepos is the search for repositories in a workspace of some
// 3,000 directories, which the audit after every workspace-write command
// repeats (audit.go), and resolving a policy too.
func BenchmarkFindRepos(b *testing.B) {
	ws := b.TempDir()
	for i := range 15 {
		for j := range 14 {
			for k := range 14 {
				if err := os.MkdirAll(filepath.Join(ws, fmt.Sprintf("a%d/b%d/c%d", i, j, k)), 0o755); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(ws, "a3", "b2", ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		repos, incomplete, err := Find([]string{ws}, nil)
		if err != nil || incomplete || len(repos) != 1 {
			b.Fatal(repos, incomplete, err)
		}
	}
}
