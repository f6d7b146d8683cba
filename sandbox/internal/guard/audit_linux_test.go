package guard

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/pathx"
	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/cordonhq/cordon/sandbox/internal/gitrepo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAuditDisarmsNewRepositories: what a command made into a repository
// keeps its commits, loses whatever would run for the human.
func TestAuditDisarmsNewRepositories(t *testing.T) {
	ws := t.TempDir()
	testenv.Git(t, ws, "init", "-q")
	testenv.Git(t, ws, "commit", "-q", "--allow-empty", "-m", "first")
	repos, _, err := gitrepo.Find([]string{ws}, nil)
	require.NoError(t, err)
	known := RepoIDs(repos)

	sub := filepath.Join(ws, "sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	testenv.Git(t, sub, "init", "-q")
	testenv.Git(t, sub, "commit", "-q", "--allow-empty", "-m", "made inside")
	require.NoError(t, os.WriteFile(filepath.Join(sub, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\nevil\n"), 0o755))
	for _, kv := range [][2]string{{"core.fsmonitor", "./fsm.sh"}, {"core.hooksPath", "hooks"}, {"alias.x", "!evil"},
		{"alias.st", "status"}, {"include.path", "/tmp/evil"}, {"remote.origin.url", "https://example.com/x.git"},
		{"protocol.ext.allow", "always"}, {"remote.up.url", "ext::sh -c evil"}, {"tar.evil.command", "./evil"},
		{"http.cookieFile", "/home/u/.bashrc"}, {"http.saveCookies", "true"}, {"core.worktree", ".git/hooks"}} {
		testenv.Git(t, sub, "config", kv[0], kv[1])
	}
	// A worktree made the way git does is kept; one whose commondir leads
	// to another repository is not.
	testenv.Git(t, ws, "worktree", "add", "-q", "wt")
	forged := filepath.Join(ws, "forged")
	require.NoError(t, os.MkdirAll(filepath.Join(forged, "gd"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(forged, "gd", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(forged, "gd", "commondir"), []byte("../../sub/.git\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(forged, ".git"), []byte("gitdir: gd\n"), 0o644))

	changes, err := auditor{root: ws}.auditNewRepos(known, time.Now(), false)
	require.NoError(t, err)
	var got []string
	for _, c := range changes {
		got = append(got, strings.TrimPrefix(c.Path, ws+"/")+" "+c.Detail)
	}
	assert.ElementsMatch(t, []string{
		"sub/.git/hooks/pre-commit a hook made inside the sandbox",
		"sub/.git/config core.fsmonitor", "sub/.git/config core.hookspath", "sub/.git/config alias.x", "sub/.git/config include.path",
		"sub/.git/config protocol.ext.allow", "sub/.git/config tar.evil.command",
		"sub/.git/config http.cookiefile", "sub/.git/config http.savecookies", "sub/.git/config core.worktree",
		"forged/gd/commondir a commondir outside the repository",
	}, got)
	cfg := testenv.Git(t, sub, "config", "--list", "--local")
	assert.Contains(t, cfg, "alias.st=status", "what runs nothing is kept")
	assert.Contains(t, cfg, "remote.origin.url=")
	assert.Contains(t, testenv.Git(t, sub, "log", "--oneline"), "made inside", "the commits are kept")
	assert.FileExists(t, filepath.Join(sub, ".git", "hooks", "pre-commit.sample"))
	assert.FileExists(t, filepath.Join(sub, ".git", "hooks", "pre-commit.cordon-disarmed"), "set aside, not lost")
	copies, err := filepath.Glob(filepath.Join(sub, ".git", "config.cordon-disarmed-*"))
	require.NoError(t, err)
	require.Len(t, copies, 1)
	kept, err := os.ReadFile(copies[0])
	require.NoError(t, err)
	assert.Contains(t, string(kept), "fsmonitor", "what was unset is kept beside the config")
	assert.FileExists(t, filepath.Join(ws, ".git", "worktrees", "wt", "commondir"))
	again, err := auditor{root: ws}.auditNewRepos(known, time.Now(), false)
	require.NoError(t, err)
	assert.Empty(t, again, "nothing is left to disarm")
}

// TestAuditRemovesAGitFileNamingAGitdirElsewhere: a command that makes a
// .git file naming a gitdir outside the root (the session tmp is writable
// too) would have the human's git take hooks from there. The file goes; one
// that was there before the command stays.
func TestAuditRemovesAGitFileNamingAGitdirElsewhere(t *testing.T) {
	ws, elsewhere := t.TempDir(), t.TempDir()
	testenv.Git(t, ws, "init", "-q", "--separate-git-dir", filepath.Join(elsewhere, "before"), "old")
	repos, _, err := gitrepo.Find([]string{ws}, nil)
	require.NoError(t, err)
	known := RepoIDs(repos)

	testenv.Git(t, ws, "init", "-q", "--separate-git-dir", filepath.Join(elsewhere, "gd"), "x")
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
	testenv.Git(t, x, "init", "-q")
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
	testenv.Git(t, ws, "init", "-q")
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

	known := RepoIDs(repos[:1])
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
	testenv.Git(t, ws, "init", "-q")
	known := func() []string {
		repos, _, err := gitrepo.Find([]string{ws}, nil)
		require.NoError(t, err)
		return RepoIDs(repos)
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
		testenv.Git(t, ws, "init", "-q", "--separate-git-dir", filepath.Join(ws, ".git", "evil-"+name), name)
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: ../.git/evil-"+name+tail), 0o644))
		hooks = append(hooks, plant(filepath.Join(ws, ".git", "evil-"+name)))
	}
	mod := filepath.Join(ws, ".git", "modules", "x")
	require.NoError(t, os.MkdirAll(filepath.Join(mod, "refs", "heads"), 0o755))
	require.NoError(t, os.Symlink("refs/heads/main", filepath.Join(mod, "HEAD")))
	hooks = append(hooks, plant(mod))
	locked := filepath.Join(ws, "locked")
	require.NoError(t, os.MkdirAll(locked, 0o755))
	testenv.Git(t, locked, "init", "-q")
	testenv.Git(t, locked, "config", "core.fsmonitor", "evil")
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
	testenv.Git(t, ws, "init", "-q")
	var want []string
	for _, rel := range []string{"a/b/c/d/e/deep", "node_modules/dep"} {
		dir := filepath.Join(ws, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		testenv.Git(t, dir, "init", "-q")
		testenv.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "s")
		head := strings.TrimSpace(testenv.Git(t, dir, "rev-parse", "HEAD"))
		testenv.Git(t, ws, "update-index", "--add", "--cacheinfo", "160000,"+head+","+rel)
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
	_, err = auditor{root: ws}.auditNewRepos(RepoIDs(repos[:1]), time.Now(), false)
	require.NoError(t, err)
	assert.NoFileExists(t, hook)
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
	root := t.TempDir()
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
	// The session tmps: this call's, and every session's under the state
	// directory, as the sandbox names them.
	set.Scratch = []string{own, filepath.Join(state, "tmp")}
	h, err := memStore.Begin(set)
	require.NoError(t, err)

	hook := armedRepo(t, filepath.Join(root, "deep", "b", "c", "d", "e"))
	links := []string{filepath.Join(root, "p", "q", "r", "s", "pkg2"), filepath.Join(root, "p", "q", "r", "s", "pkg3")}
	require.NoError(t, os.MkdirAll(filepath.Dir(links[0]), 0o755))
	require.NoError(t, os.Symlink(own, links[0]))
	require.NoError(t, os.Symlink(other, links[1]))

	changes, err := h.End()
	require.NoError(t, err)
	assert.NoFileExists(t, hook, "the deep repository the command made is disarmed: %v", changes)
	for _, l := range links {
		_, err := os.Lstat(l)
		assert.ErrorIs(t, err, os.ErrNotExist, "%s is set aside", l)
	}
}

// TestLastingHostChangeNotedByAnEarlierCall: the call whose watch saw the
// host's replacement may not be the last to end; the last one, which
// restores, keeps the host's version aside all the same, never over an
// existing file. A path the command created is removed, not kept; a
// lost event ("") counts for every path.
func TestLastingHostChangeNotedByAnEarlierCall(t *testing.T) {
	at := time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)
	was := hostAsideClock
	hostAsideClock = func() time.Time { return at }
	t.Cleanup(func() { hostAsideClock = was })
	eachGuardStore(t, func(t *testing.T, s Store) {
		root, set := guardWorld(t)
		config := filepath.Join(root, ".git", "config")
		hooks := filepath.Join(root, ".git", "hooks")
		envrc := filepath.Join(root, ".envrc")
		before, err := os.ReadFile(config)
		require.NoError(t, err)
		first, err := s.Begin(set)
		require.NoError(t, err)
		second, err := s.Begin(set)
		require.NoError(t, err)

		// The host's git config (lock file and rename) and a hook the
		// human adds; a file the command made.
		require.NoError(t, os.WriteFile(config+".lock", []byte("[user]\n\tname = Human\n"), 0o640))
		require.NoError(t, os.Rename(config+".lock", config))
		require.NoError(t, os.WriteFile(filepath.Join(hooks, "pre-push"), []byte("#!/bin/sh\n"), 0o755))
		require.NoError(t, os.WriteFile(envrc, []byte("evil"), 0o644))
		taken := config + ".cordon-host-20261207T130000Z"
		require.NoError(t, os.WriteFile(taken, []byte("an earlier one"), 0o600))

		got, err := first.EndAfterHost(HostChanges{config})
		require.NoError(t, err)
		assert.Empty(t, got, "a call that is not the last restores nothing")
		got, err = second.EndAfterHost(HostChanges{hooks})
		require.NoError(t, err)
		assert.ElementsMatch(t, []Change{
			{Path: config, What: "changed", HostKept: taken + "-2"},
			{Path: hooks, What: "changed", HostKept: hooks + ".cordon-host-20261207T130000Z"},
			{Path: envrc, What: "created"},
		}, got)

		after, err := os.ReadFile(config)
		require.NoError(t, err)
		assert.Equal(t, string(before), string(after))
		kept, err := os.ReadFile(taken + "-2")
		require.NoError(t, err)
		assert.Equal(t, "[user]\n\tname = Human\n", string(kept))
		earlier, err := os.ReadFile(taken)
		require.NoError(t, err)
		assert.Equal(t, "an earlier one", string(earlier), "an existing file is never overwritten")
		assert.FileExists(t, filepath.Join(hooks+".cordon-host-20261207T130000Z", "pre-push"))
		assert.NoFileExists(t, filepath.Join(hooks, "pre-push"))
		assert.NoFileExists(t, envrc)
		if fs, ok := s.(*fileGuardStore); ok {
			assertGuardDirEmpty(t, fs.dir)
		}
	})
	b := &guardBaseline{Root: "/r"}
	assert.True(t, b.noteHost(HostChanges{"/r/.git/config", "/elsewhere"}))
	assert.True(t, b.hostChangedAt(".git/config"))
	assert.False(t, b.hostChangedAt(".git/hooks"))
	assert.True(t, b.noteHost(HostChanges{""}))
	assert.True(t, b.hostChangedAt(".git/hooks"), "events were lost: any path may be the host's")
}

// TestAuditSetsAsideASymlinkAboveAnEntry: a symlink a command put in the
// place of a directory that held a read-deny entry holds nothing: the
// audit still sets it aside (a .git symlink would lead the human's git to
// the command's hooks).
func TestAuditSetsAsideASymlinkAboveAnEntry(t *testing.T) {
	root := pathx.CanonicalOrClean(t.TempDir())
	elsewhere := filepath.Join(root, "elsewhere")
	require.NoError(t, os.MkdirAll(filepath.Join(elsewhere, "hooks"), 0o755))
	dotgit := filepath.Join(root, "sub", ".git")
	require.NoError(t, os.MkdirAll(filepath.Dir(dotgit), 0o755))
	require.NoError(t, os.Symlink(elsewhere, dotgit))
	a := auditor{root: root, keep: []string{filepath.Join(dotgit, "secret")}}
	changes, err := a.auditNewRepos(nil, gitrepo.Everything, false)
	require.NoError(t, err)
	require.NotEmpty(t, changes)
	_, err = os.Lstat(dotgit)
	assert.ErrorIs(t, err, fs.ErrNotExist, "the .git symlink was left")
}

// TestAuditSetsAsideNewProtectedNames: what a command makes under a
// protected name beneath the top of the root is set aside once it is
// over, a symlink on the way to one too; the human's, there before, stay.
func TestAuditSetsAsideNewProtectedNames(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write := func(p, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write(filepath.Join(root, "pkg", ".vscode", "settings.json"), "{}")
	write(filepath.Join(root, "pkg", ".hg", "store", "x"), "")
	write(filepath.Join(outside, "repo", "config.toml"), "[hooks]")
	h, err := memStore.Begin(guardSetFor(t, root))
	require.NoError(t, err)

	// The command's.
	write(filepath.Join(root, "new", ".envrc"), "evil")
	write(filepath.Join(root, "pkg", ".claude", "settings.json"), `{"hooks":{}}`)
	write(filepath.Join(root, "pkg", ".hg", "hgrc"), "[hooks]")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "other"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "other", ".jj")))
	changes, err := h.End()
	require.NoError(t, err)

	var disarmed []string
	for _, c := range changes {
		disarmed = append(disarmed, c.Path)
	}
	for _, rel := range []string{"new/.envrc", "pkg/.claude", "pkg/.hg/hgrc", "other/.jj"} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		assert.Contains(t, disarmed, p)
		_, err := os.Lstat(p)
		assert.True(t, os.IsNotExist(err), "%s is still there", rel)
		_, err = os.Lstat(p + DisarmedSuffix)
		assert.NoError(t, err, "%s is set aside, not deleted", rel)
	}
	assert.FileExists(t, filepath.Join(root, "pkg", ".vscode", "settings.json"), "the human's stays")
	assert.FileExists(t, filepath.Join(outside, "repo", "config.toml"), "nothing is followed out of the root")

	// A baseline of an older cordon, which knew no names: nothing is set
	// aside on its word.
	base, err := takeBaseline(guardSetFor(t, root))
	require.NoError(t, err)
	base.NamesKnown = false
	write(filepath.Join(root, "later", ".mcp.json"), "{}")
	base.restoreAfter(t)
	assert.FileExists(t, filepath.Join(root, "later", ".mcp.json"))
}

// TestAuditKnowsProtectedNamesPastTheBound: where the policy's bounded
// search stops, it searches the whole root, and so does the baseline, so
// the human's configuration beyond the bound is not taken for a
// command's.
func TestAuditKnowsProtectedNamesPastTheBound(t *testing.T) {
	defer func(old int) { gitrepo.ScanMaxDirs = old }(gitrepo.ScanMaxDirs)
	gitrepo.ScanMaxDirs = 20
	root := t.TempDir()
	for i := range 30 {
		require.NoError(t, os.Mkdir(filepath.Join(root, fmt.Sprintf("a%02d", i)), 0o755))
	}
	human := filepath.Join(root, "zzz", ".vscode", "tasks.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(human), 0o755))
	require.NoError(t, os.WriteFile(human, []byte("{}"), 0o644))
	set := guardSetFor(t, root)
	require.True(t, set.Whole, "the bounded search stopped")
	require.False(t, set.Incomplete)
	require.Contains(t, set.Named, filepath.Dir(human), "the whole search reaches zzz")

	h, err := memStore.Begin(set)
	require.NoError(t, err)
	evil := filepath.Join(root, "zzz2", ".envrc")
	require.NoError(t, os.MkdirAll(filepath.Dir(evil), 0o755))
	require.NoError(t, os.WriteFile(evil, []byte("evil"), 0o644))
	_, err = h.End()
	require.NoError(t, err)
	assert.NoFileExists(t, evil)
	assert.FileExists(t, human, "the human's was there before")
}

// testProtectedNames are protected names the guard is given in these
// tests, as the sandbox gives it its whole list (protected_names.txt).
var testProtectedNames = []string{".vscode", ".envrc", ".claude", ".mcp.json", ".hg/hgrc", ".jj/repo/config.toml"}

// guardSetFor is what the sandbox guards beneath root, found as its
// policy finds it.
func guardSetFor(t *testing.T, root string) Set {
	t.Helper()
	found, err := gitrepo.FindWithNames([]string{root}, testProtectedNames, nil)
	require.NoError(t, err)
	set := Set{Root: root, Repos: RepoIDs(found.Repos), Incomplete: found.Incomplete, Whole: found.Whole, Names: testProtectedNames}
	for _, n := range found.Named {
		set.Named = append(set.Named, n.Path)
	}
	return set
}
