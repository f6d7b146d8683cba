package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProtectedFromTheRepositories: git's own paths come from the
// repositories found and from their configuration, read as git reads it.
func TestProtectedFromTheRepositories(t *testing.T) {
	f := newFixture(t, newBwrap())
	ws := f.ws
	testenv.Git(t, ws, "init", "-q")
	for _, kv := range [][2]string{
		{"core.hooksPath", ".husky/_"},
		{"core.fsmonitor", "./tools/fsm.sh"},
		{"filter.lfsish.clean", "sh ./tools/clean.sh %f"},
		{"alias.t", "!./scripts/t.sh --all"},
		{"alias.st", "status"},
		{"include.path", "extra.gitconfig"},
		{"gpg.program", "/usr/bin/gpg"},
	} {
		testenv.Git(t, ws, "config", kv[0], kv[1])
	}
	// Nested repositories, three levels down; one inside node_modules.
	for _, d := range []string{"a/b/sub", "node_modules/pkg"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
		testenv.Git(t, filepath.Join(ws, d), "init", "-q")
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
