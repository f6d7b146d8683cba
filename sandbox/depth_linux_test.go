package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cordonhq/cordon/sandbox/internal/gitrepo"
	"github.com/cordonhq/cordon/sandbox/internal/guard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// TestProtectedNamesBehindASymlinkToADeepDirectory: a symlink at the top
// of the workspace that presents a directory deeper than the search's
// bound (link -> deep/a/b/c/d/e) puts its configuration where the tool
// opened in link/ loads it, at depth 1: the human's link/.claude cannot be
// changed, and what a command makes through it, or through a symlink of
// its own, is set aside. The host judges.
func TestProtectedNamesBehindASymlinkToADeepDirectory(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		deep := filepath.Join(f.ws, "deep", "a", "b", "c", "d", "e")
		writeTree(t, deep, map[string]string{".claude/settings.json": `{"permissions":{}}`, "main.go": "package main\n"})
		require.NoError(t, os.Symlink(filepath.Join("deep", "a", "b", "c", "d", "e"), filepath.Join(f.ws, "link")))
		out, o := f.launch(f.policy(WorkspaceWrite, NetworkAllow), "/bin/sh", "-c", `
printf '{"hooks":1}' > link/.claude/settings.json
mkdir -p link/.vscode && printf '{"tasks":1}' > link/.vscode/tasks.json
mkdir -p deep/a/b/c/d/e2 && ln -s deep/a/b/c/d/e2 mine && printf evil > mine/.envrc
printf 'package main // edited\n' > link/main.go
true`)
		require.Equal(t, 0, o.ExitCode, out)
		b, err := os.ReadFile(filepath.Join(deep, ".claude", "settings.json"))
		require.NoError(t, err)
		assert.Equal(t, `{"permissions":{}}`, string(b), "the human's link/.claude/settings.json changed")
		assert.NoDirExists(t, filepath.Join(deep, ".vscode"), "link/.vscode made by the command stayed")
		assert.NoFileExists(t, filepath.Join(deep, "..", "e2", ".envrc"), "mine/.envrc made by the command stayed")
		b, err = os.ReadFile(filepath.Join(deep, "main.go"))
		require.NoError(t, err)
		assert.Contains(t, string(b), "edited", "code behind the link is written as ever")
	})
}

// TestMadeBeyondTheBoundDuringACall: the search lists directories down to
// its bound (3 levels beneath the root); the audit after a command also
// lists, beyond it, every directory the command made or changed that it
// reaches through such directories, and takes from them only what the
// command made: a repository made 6 levels down is disarmed, a protected
// name made 5 levels down set aside, while the human's configuration
// beyond the bound, beside which the command wrote, stays. What stays
// beyond the bound (documented): a name made inside a deep directory the
// command reached only through directories it did not change.
func TestMadeBeyondTheBoundDuringACall(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		writeTree(t, f.ws, map[string]string{
			"h1/h2/h3/h4/.vscode/settings.json":    `{}`,
			"h1/h2/h3/h4/main.go":                  "package main\n",
			"old1/old2/old3/old4/old5/placeholder": "",
		})
		// The human's tree is older than the call by more than the audit's
		// slack for change times, as one made before it is, and older
		// than the cordon that serves the call (which looks beyond the
		// bound into what changed since it started).
		time.Sleep(gitrepo.ChangeTimeSlack + 500*time.Millisecond)
		defer func(old time.Time) { guard.ProcessStart = old }(guard.ProcessStart)
		guard.ProcessStart = time.Now()
		out, o := f.launch(f.policy(WorkspaceWrite, NetworkAllow), "/bin/sh", "-c", `set -e
mkdir -p x1/x2/x3/x4/x5/x6 && cd x1/x2/x3/x4/x5/x6 && git init -q . && printf '#!/bin/sh\necho pwned\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout
git config core.fsmonitor 'echo pwned'
cd "$OLDPWD"
mkdir -p y1/y2/y3/y4/y5 && printf evil > y1/y2/y3/y4/y5/.envrc
printf evil > h1/h2/h3/h4/.mcp.json
printf 'package main // edited\n' > h1/h2/h3/h4/main.go
printf evil > old1/old2/old3/old4/old5/.mcp.json`)
		require.Equal(t, 0, o.ExitCode, out)
		repo := filepath.Join(f.ws, "x1", "x2", "x3", "x4", "x5", "x6")
		assert.NoFileExists(t, filepath.Join(repo, ".git", "hooks", "post-checkout"), "the hook of a repository made beyond the bound stayed")
		assert.NotContains(t, gitConfigOf(t, repo), "fsmonitor", "its configuration still runs a program")
		assert.NoFileExists(t, filepath.Join(f.ws, "y1", "y2", "y3", "y4", "y5", ".envrc"))
		assert.NoFileExists(t, filepath.Join(f.ws, "h1", "h2", "h3", "h4", ".mcp.json"))
		assert.FileExists(t, filepath.Join(f.ws, "h1", "h2", "h3", "h4", ".vscode", "settings.json"), "the human's, beyond the bound, stays")
		assert.FileExists(t, filepath.Join(f.ws, "old1", "old2", "old3", "old4", "old5", ".mcp.json"),
			"the documented bound: inside a deep directory reached through directories the command did not change")
	})
}

func gitConfigOf(t *testing.T, repo string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, ".git", "config"))
	require.NoError(t, err)
	return string(b)
}
