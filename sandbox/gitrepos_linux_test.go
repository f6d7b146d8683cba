package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cordonhq/cordon/sandbox/internal/gitrepo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// TestProtectedFromTheRepositories: git's own paths come from the
// repositories found and from their configuration, read as git reads it.
func TestProtectedFromTheRepositories(t *testing.T) {
	f := newFixture(t, newBwrap())
	ws := f.ws
	gitOut(t, ws, "init", "-q")
	for _, kv := range [][2]string{
		{"core.hooksPath", ".husky/_"},
		{"core.fsmonitor", "./tools/fsm.sh"},
		{"filter.lfsish.clean", "sh ./tools/clean.sh %f"},
		{"alias.t", "!./scripts/t.sh --all"},
		{"alias.st", "status"},
		{"include.path", "extra.gitconfig"},
		{"gpg.program", "/usr/bin/gpg"},
	} {
		gitOut(t, ws, "config", kv[0], kv[1])
	}
	// Nested repositories, three levels down; one inside node_modules.
	for _, d := range []string{"a/b/sub", "node_modules/pkg"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
		gitOut(t, filepath.Join(ws, d), "init", "-q")
	}
	// A submodule's gitdir, and a checkout pointing at it with a .git file.
	modDir := filepath.Join(ws, ".git", "modules", "lib")
	require.NoError(t, os.MkdirAll(filepath.Join(modDir, "hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(modDir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "lib"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "lib", ".git"), []byte("gitdir: ../.git/modules/lib\n"), 0o644))

	p := f.policy(WorkspaceWrite, NetworkAllow)
	for _, want := range []string{
		".git/hooks", ".git/config", ".git/config.worktree", ".git/commondir", ".gitmodules",
		".husky/_", ".husky", "tools/fsm.sh", "tools/clean.sh", "scripts/t.sh", ".git/extra.gitconfig",
		"a/b/sub/.git/hooks", "a/b/sub/.git/config",
		".git/modules/lib/hooks", ".git/modules/lib/config", "lib/.git",
		".envrc", ".claude", ".vscode", ".bash_aliases",
	} {
		assert.Contains(t, p.Protected, filepath.Join(ws, want))
	}
	for _, not := range []string{"node_modules/pkg/.git/hooks", "status"} {
		assert.NotContains(t, p.Protected, filepath.Join(ws, not))
	}
	var gitdirs []string
	for _, r := range p.Repos {
		gitdirs = append(gitdirs, r.GitDir)
	}
	assert.Contains(t, gitdirs, filepath.Join(ws, "a", "b", "sub", ".git"))
	assert.Contains(t, gitdirs, modDir)
	assert.Contains(t, p.Inputs.Contents, filepath.Join(ws, ".git", "config"), "the policy is recomputed when the config changes")
	assert.Contains(t, p.Inputs.Trees, filepath.Join(ws, "a", "b"), "… and when a repository may appear")
}

// TestHomeRootRefusedNotListed: a writable root that holds the home is
// refused (homerule.go) instead of protecting a list of the home's
// start-up locations; a project inside the home protects none of them.
func TestHomeRootRefusedNotListed(t *testing.T) {
	f := newFixture(t, newBwrap())
	p := f.policyAt(f.home, WorkspaceWrite)
	var ue *UnavailableError
	require.ErrorAs(t, p.Refusal(), &ue)
	_, err := p.ToConfined()
	require.ErrorAs(t, err, &ue)
	p = f.policy(WorkspaceWrite, NetworkAllow)
	require.NoError(t, p.Refusal())
	assert.NotContains(t, p.Protected, filepath.Join(f.home, ".vimrc"))
}

// TestSymlinkedNestedGitRefused: a .git that is a symlink anywhere in the
// search is refused, like the workspace's own (SPEC §1).
func TestSymlinkedNestedGitRefused(t *testing.T) {
	f := newFixture(t, newBwrap())
	require.NoError(t, os.MkdirAll(filepath.Join(f.ws, "vendor", "x"), 0o755))
	require.NoError(t, os.Symlink(f.outside, filepath.Join(f.ws, "vendor", "x", ".git")))
	cp, err := f.policy(WorkspaceWrite, NetworkAllow).ToConfined()
	require.NoError(t, err)
	_, err = newBwrap().Confine([]string{"true"}, cp)
	assert.ErrorIs(t, err, errProtectedSymlink)
	assert.Contains(t, err.Error(), filepath.Join("vendor", "x", ".git"))
}

// TestAuditDisarmsNewRepositories: what a command made into a repository
// keeps its commits, loses whatever would run for the human.
func TestAuditDisarmsNewRepositories(t *testing.T) {
	f := newFixture(t, newBwrap())
	gitOut(t, f.ws, "init", "-q")
	gitOut(t, f.ws, "commit", "-q", "--allow-empty", "-m", "first")
	known := repoIDs(f.policy(WorkspaceWrite, NetworkAllow).Repos)

	sub := filepath.Join(f.ws, "sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	gitOut(t, sub, "init", "-q")
	gitOut(t, sub, "commit", "-q", "--allow-empty", "-m", "made inside")
	require.NoError(t, os.WriteFile(filepath.Join(sub, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\nevil\n"), 0o755))
	for _, kv := range [][2]string{{"core.fsmonitor", "./fsm.sh"}, {"core.hooksPath", "hooks"}, {"alias.x", "!evil"},
		{"alias.st", "status"}, {"include.path", "/tmp/evil"}, {"remote.origin.url", "https://example.com/x.git"},
		{"protocol.ext.allow", "always"}, {"remote.up.url", "ext::sh -c evil"}, {"tar.evil.command", "./evil"},
		{"http.cookieFile", "/home/u/.bashrc"}, {"http.saveCookies", "true"}, {"core.worktree", ".git/hooks"}} {
		gitOut(t, sub, "config", kv[0], kv[1])
	}
	// A worktree made the way git does is kept; one whose commondir leads
	// to another repository is not.
	gitOut(t, f.ws, "worktree", "add", "-q", "wt")
	forged := filepath.Join(f.ws, "forged")
	require.NoError(t, os.MkdirAll(filepath.Join(forged, "gd"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(forged, "gd", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(forged, "gd", "commondir"), []byte("../../sub/.git\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(forged, ".git"), []byte("gitdir: gd\n"), 0o644))

	changes, err := auditor{root: f.ws}.auditNewRepos(known, time.Now(), false)
	require.NoError(t, err)
	var got []string
	for _, c := range changes {
		got = append(got, strings.TrimPrefix(c.Path, f.ws+"/")+" "+c.Detail)
	}
	assert.ElementsMatch(t, []string{
		"sub/.git/hooks/pre-commit a hook made inside the sandbox",
		"sub/.git/config core.fsmonitor", "sub/.git/config core.hookspath", "sub/.git/config alias.x", "sub/.git/config include.path",
		"sub/.git/config protocol.ext.allow", "sub/.git/config tar.evil.command",
		"sub/.git/config http.cookiefile", "sub/.git/config http.savecookies", "sub/.git/config core.worktree",
		"forged/gd/commondir a commondir outside the repository",
	}, got)
	cfg := gitOut(t, sub, "config", "--list", "--local")
	assert.Contains(t, cfg, "alias.st=status", "what runs nothing is kept")
	assert.Contains(t, cfg, "remote.origin.url=")
	assert.Contains(t, gitOut(t, sub, "log", "--oneline"), "made inside", "the commits are kept")
	assert.FileExists(t, filepath.Join(sub, ".git", "hooks", "pre-commit.sample"))
	assert.FileExists(t, filepath.Join(sub, ".git", "hooks", "pre-commit.cordon-disarmed"), "set aside, not lost")
	copies, err := filepath.Glob(filepath.Join(sub, ".git", "config.cordon-disarmed-*"))
	require.NoError(t, err)
	require.Len(t, copies, 1)
	kept, err := os.ReadFile(copies[0])
	require.NoError(t, err)
	assert.Contains(t, string(kept), "fsmonitor", "what was unset is kept beside the config")
	assert.FileExists(t, filepath.Join(f.ws, ".git", "worktrees", "wt", "commondir"))
	again, err := auditor{root: f.ws}.auditNewRepos(known, time.Now(), false)
	require.NoError(t, err)
	assert.Empty(t, again, "nothing is left to disarm")
}

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
	repos, _, err := gitrepo.Find([]string{ws}, nil)
	require.NoError(t, err)
	require.Len(t, repos, 1)
	assert.Equal(t, filepath.Join(locked, ".git"), repos[0].GitDir)
}

// TestAuditRemovesAGitFileNamingAGitdirElsewhere: a command that makes a
// .git file naming a gitdir outside the root (the session tmp is writable
// too) would have the human's git take hooks from there. The file goes; one
// that was there before the command stays.
func TestAuditRemovesAGitFileNamingAGitdirElsewhere(t *testing.T) {
	ws, elsewhere := t.TempDir(), t.TempDir()
	gitOut(t, ws, "init", "-q", "--separate-git-dir", filepath.Join(elsewhere, "before"), "old")
	repos, _, err := gitrepo.Find([]string{ws}, nil)
	require.NoError(t, err)
	known := repoIDs(repos)

	gitOut(t, ws, "init", "-q", "--separate-git-dir", filepath.Join(elsewhere, "gd"), "x")
	require.NoError(t, os.WriteFile(filepath.Join(elsewhere, "gd", "hooks", "pre-commit"), []byte("#!/bin/sh\nevil\n"), 0o755))
	changes, err := auditor{root: ws}.auditNewRepos(known, time.Now(), false)
	require.NoError(t, err)
	assert.Equal(t, []Change{{Path: filepath.Join(ws, "x", ".git"), What: "disarmed", Detail: "a .git file naming a gitdir outside " + ws}}, changes)
	assert.NoFileExists(t, filepath.Join(ws, "x", ".git"))
	assert.FileExists(t, filepath.Join(ws, "old", ".git"), "a .git file that was there before stays")
}

// TestAuditLooksPastASymlinkedGit: a .git symlink stops a sandbox from
// being built, not the audit: the repositories beside it are disarmed, and
// the symlink goes.
func TestAuditLooksPastASymlinkedGit(t *testing.T) {
	ws := t.TempDir()
	hook := armedRepo(t, filepath.Join(ws, "x"))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "a"), 0o755))
	require.NoError(t, os.Symlink("/nonexistent", filepath.Join(ws, "a", ".git")))
	_, _, err := gitrepo.Find([]string{ws}, nil)
	require.ErrorIs(t, err, gitrepo.ErrSymlink, "no sandbox is built")
	changes, err := auditor{root: ws}.auditNewRepos(nil, time.Now(), false)
	require.NoError(t, err)
	assert.Contains(t, changes, Change{Path: filepath.Join(ws, "a", ".git"), What: "disarmed", Detail: "a .git that is a symlink"})
	assert.Contains(t, changes, Change{Path: hook, What: "disarmed", Detail: "a hook made inside the sandbox"})
	assert.NoFileExists(t, hook)
}

// TestAuditCannotBeOutrunByNewDirectories: the search for repositories
// stops after gitrepo.ScanMaxDirs directories, but directories a command made
// or changed do not count against that for the audit, so making many does
// not push a repository the command made beyond it.
func TestAuditCannotBeOutrunByNewDirectories(t *testing.T) {
	defer func(old int) { gitrepo.ScanMaxDirs = old }(gitrepo.ScanMaxDirs)
	gitrepo.ScanMaxDirs = 20
	ws := t.TempDir()
	deep := filepath.Join(ws, "old", "deep")
	require.NoError(t, os.MkdirAll(deep, 0o755))
	since := time.Now().Add(gitrepo.ChangeTimeSlack + 50*time.Millisecond) // what is made from now on has changed since
	time.Sleep(100 * time.Millisecond)

	for i := range 30 { // sorted before "old", searched before it
		require.NoError(t, os.Mkdir(filepath.Join(ws, fmt.Sprintf("a%02d", i)), 0o755))
	}
	hook := armedRepo(t, filepath.Join(deep, "x"))

	repos, incomplete, err := gitrepo.Find([]string{ws}, nil)
	require.NoError(t, err)
	require.True(t, incomplete, "the bounded search stops in the new directories")
	require.Empty(t, repos, "… before it reaches the repository")

	changes, err := auditor{root: ws}.auditNewRepos(nil, since, false)
	require.NoError(t, err)
	assert.Contains(t, changes, Change{Path: hook, What: "disarmed", Detail: "a hook made inside the sandbox"})
	assert.NoFileExists(t, hook)
}

// TestAuditRemovesAConfigGitCannotList: a new repository's configuration
// that `git config --list` fails on (here a bad line; a file too large to
// list in time takes the same path) is removed, not left as it is.
func TestAuditRemovesAConfigGitCannotList(t *testing.T) {
	ws := t.TempDir()
	x := filepath.Join(ws, "x")
	require.NoError(t, os.MkdirAll(x, 0o755))
	gitOut(t, x, "init", "-q")
	cfg := filepath.Join(x, ".git", "config")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("[core]\n\tfsmonitor = evil\n[broken\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	changes, err := auditor{root: ws}.auditNewRepos(nil, time.Now(), false)
	require.NoError(t, err)
	require.Len(t, changes, 1)
	assert.Equal(t, cfg, changes[0].Path)
	assert.Contains(t, changes[0].Detail, "a configuration git did not list")
	assert.NoFileExists(t, cfg)
}

// TestRepositoriesGitFindsWithoutADotGit: a directory that holds HEAD,
// objects and refs is a gitdir to git's discovery, which takes it for a
// bare repository when the .git below it is missing or broken, and
// core.worktree gives it a work tree. It is a repository like any other,
// and the .git beside it still counts.
func TestRepositoriesGitFindsWithoutADotGit(t *testing.T) {
	ws := t.TempDir()
	gitOut(t, ws, "init", "-q")
	src := filepath.Join(ws, "src")
	for _, d := range []string{"objects", "refs"} {
		require.NoError(t, os.MkdirAll(filepath.Join(src, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(src, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "config"), []byte("[core]\n\tworktree = ..\n\tfsmonitor = evil\n"), 0o644))
	repos, _, err := gitrepo.Find([]string{ws}, nil)
	require.NoError(t, err)
	var gitdirs []string
	for _, r := range repos {
		gitdirs = append(gitdirs, r.GitDir)
	}
	assert.ElementsMatch(t, []string{filepath.Join(ws, ".git"), src}, gitdirs)

	known := repoIDs(repos[:1])
	changes, err := auditor{root: ws}.auditNewRepos(known, time.Now(), false)
	require.NoError(t, err)
	assert.Equal(t, []Change{{Path: filepath.Join(src, "config"), What: "disarmed", Detail: "core.worktree"},
		{Path: filepath.Join(src, "config"), What: "disarmed", Detail: "core.fsmonitor"}}, changes)
}

// TestAuditReadsGitFilesAsGitDoes: what cordon takes for a repository's
// gitdir, git must too, and the other way round. A .git file may end in a
// NUL or in many newlines (git reads up to 1 MiB and stops at a NUL); a
// submodule gitdir's HEAD may be a symlink; a leftover config.lock keeps
// git config from unsetting a key. None of these keeps a repository a
// command made from being disarmed.
func TestAuditReadsGitFilesAsGitDoes(t *testing.T) {
	ws := t.TempDir()
	gitOut(t, ws, "init", "-q")
	known := func() []string {
		repos, _, err := gitrepo.Find([]string{ws}, nil)
		require.NoError(t, err)
		return repoIDs(repos)
	}()
	plant := func(gitdir string) string {
		hook := filepath.Join(gitdir, "hooks", "pre-commit")
		require.NoError(t, os.MkdirAll(filepath.Dir(hook), 0o755))
		require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\nevil\n"), 0o755))
		return hook
	}
	var hooks []string
	for name, tail := range map[string]string{"nul": "\x00\n", "newlines": strings.Repeat("\n", 5000)} {
		dir := filepath.Join(ws, name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		gitOut(t, ws, "init", "-q", "--separate-git-dir", filepath.Join(ws, ".git", "evil-"+name), name)
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: ../.git/evil-"+name+tail), 0o644))
		hooks = append(hooks, plant(filepath.Join(ws, ".git", "evil-"+name)))
	}
	mod := filepath.Join(ws, ".git", "modules", "x")
	require.NoError(t, os.MkdirAll(filepath.Join(mod, "refs", "heads"), 0o755))
	require.NoError(t, os.Symlink("refs/heads/main", filepath.Join(mod, "HEAD")))
	hooks = append(hooks, plant(mod))
	locked := filepath.Join(ws, "locked")
	require.NoError(t, os.MkdirAll(locked, 0o755))
	gitOut(t, locked, "init", "-q")
	gitOut(t, locked, "config", "core.fsmonitor", "evil")
	require.NoError(t, os.WriteFile(filepath.Join(locked, ".git", "config.lock"), nil, 0o644))

	_, err := auditor{root: ws}.auditNewRepos(known, time.Now(), false)
	require.NoError(t, err)
	for _, hook := range hooks {
		assert.NoFileExists(t, hook)
	}
	assert.NoFileExists(t, filepath.Join(locked, ".git", "config"), "a config whose key cannot be unset goes")
}

// TestProtectedRepositoryBeneathAnUnreadableDirectory: a command (as the
// user) may take read access away from a directory (chmod 111) that git
// still passes through; the audit still finds the repository beneath.
// Root reads it anyway; TestUnprivileged runs this as nobody.
func TestProtectedRepositoryBeneathAnUnreadableDirectory(t *testing.T) {
	ws := t.TempDir()
	hook := armedRepo(t, filepath.Join(ws, "a", "lib"))
	require.NoError(t, os.Chmod(filepath.Join(ws, "a"), 0o111))
	t.Cleanup(func() { os.Chmod(filepath.Join(ws, "a"), 0o755) })
	_, err := auditor{root: ws}.auditNewRepos(nil, time.Now(), false)
	require.NoError(t, err)
	assert.NoFileExists(t, hook)
}

// TestRepositoriesGitlinksName: git status looks into every populated
// gitlink of the index, at any depth and in node_modules, where the
// search does not go: the repositories there are found too.
func TestRepositoriesGitlinksName(t *testing.T) {
	ws := t.TempDir()
	gitOut(t, ws, "init", "-q")
	var want []string
	for _, rel := range []string{"a/b/c/d/e/deep", "node_modules/dep"} {
		dir := filepath.Join(ws, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		gitOut(t, dir, "init", "-q")
		gitOut(t, dir, "commit", "-q", "--allow-empty", "-m", "s")
		head := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD"))
		gitOut(t, ws, "update-index", "--add", "--cacheinfo", "160000,"+head+","+rel)
		want = append(want, filepath.Join(dir, ".git"))
	}
	hook := filepath.Join(ws, "a", "b", "c", "d", "e", "deep", ".git", "hooks", "pre-commit")
	require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\nevil\n"), 0o755))
	repos, _, err := gitrepo.Find([]string{ws}, nil)
	require.NoError(t, err)
	var gitdirs []string
	for _, r := range repos {
		gitdirs = append(gitdirs, r.GitDir)
	}
	assert.Subset(t, gitdirs, want)
	_, err = auditor{root: ws}.auditNewRepos(repoIDs(repos[:1]), time.Now(), false)
	require.NoError(t, err)
	assert.NoFileExists(t, hook)
}

// TestRepositoriesGitFindsAtTheDepthLimit: the search looks at the
// directories on its last level for a .git without listing them, and for
// what makes a directory a gitdir too.
func TestRepositoriesGitFindsAtTheDepthLimit(t *testing.T) {
	ws := t.TempDir()
	handlers := filepath.Join(ws, "pkg", "api", "internal", "handlers") // depth 4
	require.NoError(t, os.MkdirAll(handlers, 0o755))
	gitOut(t, handlers, "init", "-q", "--bare")
	repos, _, err := gitrepo.Find([]string{ws}, nil)
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
	gitOut(t, dir, "init", "-q")
	gitOut(t, dir, "commit", "-q", "--allow-empty", "-m", "s")
	return strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD"))
}

func gitdirsOf(t *testing.T, ws string) []string {
	t.Helper()
	repos, _, err := gitrepo.Find([]string{ws}, nil)
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
		gitOut(t, ws, "init", "-q")
		deep := filepath.Join(ws, "node_modules", "evil", ".git")
		head := linkedRepo(t, ws, "node_modules/evil")
		assert.NotContains(t, gitdirsOf(t, ws), deep)
		gitOut(t, ws, "update-index", "--add", "--cacheinfo", "160000,"+head+",other") // an index file to copy
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
		gitOut(t, ws, "init", "-q")
		head := linkedRepo(t, ws, "a/b/c/d/e/deep")
		gitOut(t, ws, "update-index", "--add", "--cacheinfo", "160000,"+head+",a/b/c/d/e/deep")
		gitOut(t, ws, "update-index", "--split-index")
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
	gitOut(t, ws, "init", "-q")
	gitOut(t, ws, "add", ".")
	gitOut(t, ws, "commit", "-q", "-m", "i")
	gitOut(t, ws, "sparse-checkout", "set", "--cone", "a")
	gitOut(t, ws, "config", "index.sparse", "true")
	gitOut(t, ws, "sparse-checkout", "reapply")
	linkedRepo(t, ws, "x/y/z/w/v/deep") // 6 down, linked from nowhere
	assert.Contains(t, gitdirsOf(t, ws), filepath.Join(ws, "x", "y", "z", "w", "v", "deep", ".git"))
}

// TestGitlinkListingIsKeptOnlyWhileTheIndexHolds: an index that has not
// changed for a while is not listed again; a change of the index in place,
// of the file a symlinked index leads to, or of a shared index file is
// seen at the next search.
func TestGitlinkListingIsKeptOnlyWhileTheIndexHolds(t *testing.T) {
	ws := t.TempDir()
	gitOut(t, ws, "init", "-q")
	head := linkedRepo(t, ws, "node_modules/evil")
	deep := filepath.Join(ws, "node_modules", "evil", ".git")
	gitdir := filepath.Join(ws, ".git")
	gitOut(t, ws, "update-index", "--add", "--cacheinfo", "160000,"+head+",other")
	data, err := os.ReadFile(filepath.Join(gitdir, "index"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(gitdir, "idx2"), data, 0o644))
	require.NoError(t, os.Remove(filepath.Join(gitdir, "index")))
	require.NoError(t, os.Symlink("idx2", filepath.Join(gitdir, "index")))
	time.Sleep(gitrepo.ChangeTimeSlack + 200*time.Millisecond) // let the index settle, as an unchanged one has

	before := gitrepo.GitlinkListings.Load()
	assert.NotContains(t, gitdirsOf(t, ws), deep)
	assert.NotContains(t, gitdirsOf(t, ws), deep)
	assert.Equal(t, int64(1), gitrepo.GitlinkListings.Load()-before, "a settled index is listed once")

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

// TestAuditSetsAsideLinksIntoTheSessionTmp: a link beneath a root that
// leads into the session tmp (writable by the command, searched by
// nobody) presents there to the human's git and editor what the command
// wrote unaudited; every such link is set aside, dangling or through
// another link, beyond the search's depth too, and links elsewhere stay.
func TestAuditSetsAsideLinksIntoTheSessionTmp(t *testing.T) {
	ws, tmp, other := t.TempDir(), t.TempDir(), t.TempDir()
	since := time.Now().Add(-time.Minute)
	armedRepo(t, filepath.Join(tmp, "evil"))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "a", "b", "c", "d", "e"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(ws, "inside"), 0o755))
	rel, err := filepath.Rel(ws, filepath.Join(tmp, "evil"))
	require.NoError(t, err)
	links := map[string]string{
		"pkg2":               filepath.Join(tmp, "evil"),
		"dangling":           filepath.Join(tmp, "later", "repo"),
		"relative":           rel,
		"hop":                filepath.Join(ws, "totmp", "evil"), // through the next one
		"totmp":              tmp,
		"a/b/c/d/e/deep":     filepath.Join(tmp, "evil"),
		"elsewhere":          other,
		"within":             filepath.Join(ws, "inside"),
		"a/b/c/d/e/deepkeep": other,
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(ws, name)))
	}
	changes, err := auditor{root: ws, scratch: []string{tmp}}.auditNewRepos(nil, since, false)
	require.NoError(t, err)
	for _, name := range []string{"pkg2", "dangling", "relative", "hop", "totmp", "a/b/c/d/e/deep"} {
		p := filepath.Join(ws, name)
		assert.Contains(t, changes, Change{Path: p, What: "disarmed", Detail: "a symlink into the session's private tmp"}, name)
		_, err := os.Lstat(p)
		assert.ErrorIs(t, err, os.ErrNotExist, "%s is set aside", name)
	}
	for _, name := range []string{"elsewhere", "within", "a/b/c/d/e/deepkeep"} {
		_, err := os.Lstat(filepath.Join(ws, name))
		assert.NoError(t, err, "%s stays", name)
	}
	assert.FileExists(t, filepath.Join(tmp, "evil", ".git", "config"), "nothing in the session tmp is touched")
}

// TestWholeAuditStillListsWhatACommandMadeDeep: where the bounded search
// stops (a tree with more directories than the bound, or one an earlier
// command flooded), the audit searches the whole root and still lists,
// beyond the search depth, the directories the command made: a deep
// repository it made is disarmed, and a deep link into a session tmp
// (its own or another session's) is set aside.
func TestWholeAuditStillListsWhatACommandMadeDeep(t *testing.T) {
	defer func(old int) { gitrepo.ScanMaxDirs = old }(gitrepo.ScanMaxDirs)
	gitrepo.ScanMaxDirs = 20
	root := testBase(t)
	state := t.TempDir()
	own, other := filepath.Join(state, "tmp", "own"), filepath.Join(state, "tmp", "other")
	for _, d := range []string{own, other} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}
	for i := range 30 {
		require.NoError(t, os.Mkdir(filepath.Join(root, fmt.Sprintf("a%02d", i)), 0o755))
	}
	set := guardSetFor(t, root)
	require.True(t, set.Whole, "the bounded search stopped")
	set.Scratch = scratchDirs(ExecutionPolicy{Mode: WorkspaceWrite, WritableRoots: []string{root, own}, TmpDir: own, StateDir: state})
	h, err := memStore.begin(set)
	require.NoError(t, err)

	hook := armedRepo(t, filepath.Join(root, "deep", "b", "c", "d", "e"))
	links := []string{filepath.Join(root, "p", "q", "r", "s", "pkg2"), filepath.Join(root, "p", "q", "r", "s", "pkg3")}
	require.NoError(t, os.MkdirAll(filepath.Dir(links[0]), 0o755))
	require.NoError(t, os.Symlink(own, links[0]))
	require.NoError(t, os.Symlink(other, links[1]))

	changes, err := h.end()
	require.NoError(t, err)
	assert.NoFileExists(t, hook, "the deep repository the command made is disarmed: %v", changes)
	for _, l := range links {
		_, err := os.Lstat(l)
		assert.ErrorIs(t, err, os.ErrNotExist, "%s is set aside", l)
	}
}
