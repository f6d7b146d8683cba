//go:build linux

package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBashReportsProtection: what the model is told about protected
// paths, on both backends — a write the guard undid is a denial that names
// what was undone, and a refusal a command got over is explained.
func TestBashReportsProtection(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			git := exec.Command("git", "init", "-q")
			git.Dir = w.ws
			require.NoError(t, git.Run())
			cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "workspace-write", "--backend", backend)

			res := call(t, cs, "bash", map[string]any{"command": "mkdir -p .claude && echo '{}' > .claude/settings.json && echo made"})
			assert.True(t, res.IsError, text(res))
			assert.True(t, strings.HasPrefix(text(res), "[sandbox: file access denied under workspace-write mode]"), text(res))
			assert.Contains(t, text(res), filepath.Join(w.ws, ".claude")+" (created)")
			assert.Contains(t, text(res), "made", "the output is still there")
			assert.Equal(t, true, structured(t, res)["denied"])
			assert.NoDirExists(t, filepath.Join(w.ws, ".claude"), "undone on the host")

			res = call(t, cs, "bash", map[string]any{"command": "git config core.hooksPath .husky 2>&1; echo carried on"})
			if backend == "bwrap" {
				assert.False(t, res.IsError, text(res))
				assert.Contains(t, text(res), "[sandbox: .git/config is protected")
				assert.Contains(t, structured(t, res)["notes"], "[sandbox: .git/config is protected: it names code a human runs later outside the sandbox, so only the human changes it]")
			} else {
				assert.True(t, res.IsError, text(res))
				assert.Contains(t, text(res), filepath.Join(w.ws, ".git", "config")+" (changed)")
			}
			cfg, err := os.ReadFile(filepath.Join(w.ws, ".git", "config"))
			require.NoError(t, err)
			assert.NotContains(t, string(cfg), "hooksPath")
		})
	}
}

// armedRepos runs fn for each backend with a workspace-write server, and
// afterwards acts as the human: git status, git commit and git fetch in
// each of dirs, unconfined, which must run nothing the model planted (a
// payload touches canary).
func armedRepos(t *testing.T, setup func(w *world), fn func(t *testing.T, w *world, cs *mcp.ClientSession, canary string) (dirs []string)) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			if setup != nil {
				setup(w)
			}
			cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "workspace-write", "--backend", backend)
			canary := filepath.Join(w.outside, "RAN")
			for _, dir := range fn(t, w, cs, canary) {
				if _, err := os.Stat(dir); err != nil {
					continue // gone
				}
				for _, args := range [][]string{{"status"}, {"-c", "user.name=h", "-c", "user.email=h@example.com", "commit", "--allow-empty", "-q", "-m", "human"}, {"fetch", "--all"}} {
					git := exec.Command("git", args...)
					git.Dir = dir
					out, err := git.CombinedOutput()
					t.Logf("the human's git %v in %s: %v %s", args, dir, err, out)
				}
			}
			assert.NoFileExists(t, canary, "the human's git ran what the model planted")
		})
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	git := exec.Command("git", "init", "-q")
	git.Dir = dir
	require.NoError(t, git.Run())
}

// TestOverlappingCallsCannotArmARepository: a model that makes a
// repository in one call and keeps a second call running beside it (two
// tool calls in parallel, as agents make them) must not get that
// repository's hooks and configuration past the audit. The second call's
// policy finds the repository and protects it as it then is; the audit
// after the last call must still take it for one a command made.
func TestOverlappingCallsCannotArmARepository(t *testing.T) {
	armedRepos(t, func(w *world) { gitInit(t, w.ws) }, func(t *testing.T, w *world, cs *mcp.ClientSession, canary string) []string {
		x := filepath.Join(w.ws, "x")
		arm := fmt.Sprintf(`git init -q x && printf '#!/bin/sh\ntouch %[1]s\n' > x/.git/hooks/pre-commit && chmod +x x/.git/hooks/pre-commit &&
git -C x config core.fsmonitor 'touch %[1]s; false' && touch x/armed && sleep 3; echo armed`, canary)
		first := make(chan *mcp.CallToolResult, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": arm}})
			if err != nil {
				res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
			}
			first <- res
		}()
		require.Eventually(t, func() bool { _, err := os.Stat(filepath.Join(x, "armed")); return err == nil },
			30*time.Second, 20*time.Millisecond, "the first call arms the repository")
		res := call(t, cs, "bash", map[string]any{"command": "echo beside"})
		assert.Contains(t, text(res), "beside")
		res = <-first
		assert.Contains(t, text(res), "armed")
		assert.Contains(t, text(res), filepath.Join(x, ".git", "hooks", "pre-commit"), "the model is told what was disarmed")
		assert.NoFileExists(t, filepath.Join(x, ".git", "hooks", "pre-commit"))
		return []string{x}
	})
}

// TestMovedRepositoryIsAudited: a nested repository moved to a new place
// (its directory renamed) keeps its gitdir's identity, but leaves the
// paths the guard keeps, which are guarded by name. Its hooks and
// configuration at the new place are the command's.
func TestMovedRepositoryIsAudited(t *testing.T) {
	armedRepos(t, func(w *world) { gitInit(t, filepath.Join(w.ws, "sub")) }, func(t *testing.T, w *world, cs *mcp.ClientSession, canary string) []string {
		moved := filepath.Join(w.ws, "moved")
		res := call(t, cs, "bash", map[string]any{"command": fmt.Sprintf(`mv sub moved 2>&1; cd moved || exit 1
printf '#!/bin/sh\ntouch %[1]s\n' > .git/hooks/pre-commit 2>&1; chmod +x .git/hooks/pre-commit 2>&1
git config core.fsmonitor 'touch %[1]s; false' 2>&1; echo done`, canary)})
		assert.Contains(t, text(res), "done")
		assert.NoFileExists(t, filepath.Join(moved, ".git", "hooks", "pre-commit"))
		return []string{moved, filepath.Join(w.ws, "sub")}
	})
}

// TestRepositoryWithItsGitdirInTheSessionTmp: a repository a command makes
// whose gitdir lies in the session tmp (writable too, and outside the
// workspace): the human's git in the workspace would follow the .git file
// there.
func TestRepositoryWithItsGitdirInTheSessionTmp(t *testing.T) {
	armedRepos(t, nil, func(t *testing.T, w *world, cs *mcp.ClientSession, canary string) []string {
		x := filepath.Join(w.ws, "x")
		// Under bwrap the session tmp is /tmp inside; its place on the
		// host is the source of that mount.
		res := call(t, cs, "bash", map[string]any{"command": fmt.Sprintf(`host=$(awk '$5 == "/tmp" {print $4}' /proc/self/mountinfo | head -1)
case "$host" in /*) ;; *) host=$TMPDIR ;; esac
git init -q --separate-git-dir "$TMPDIR/gd" x && printf 'gitdir: %%s\n' "$host/gd" > x/.git
printf '#!/bin/sh\ntouch %[1]s\n' > "$TMPDIR/gd/hooks/pre-commit"; chmod +x "$TMPDIR/gd/hooks/pre-commit"
git -C x config core.fsmonitor 'touch %[1]s; false' 2>&1; cat x/.git; echo done`, canary)})
		assert.Contains(t, text(res), "done")
		assert.Contains(t, text(res), filepath.Join(x, ".git")+" (disarmed: a .git file naming a gitdir outside", "the model is told")
		return []string{x}
	})
}

// TestLinkIntoTheSessionTmp: a repository a command makes in the session
// tmp (writable, and no root the audit searches), presented in the
// workspace by a symlink: the human's git status in pkg2/ would run its
// core.fsmonitor. The link goes after the call that made it, whether the
// repository came in the same call or an earlier one.
func TestLinkIntoTheSessionTmp(t *testing.T) {
	// Under bwrap the session tmp is /tmp inside; its place on the host
	// is the source of that mount.
	const hostTmp = `host=$(awk '$5 == "/tmp" {print $4}' /proc/self/mountinfo | head -1)
case "$host" in /*) ;; *) host=$TMPDIR ;; esac
`
	arm := func(canary string) string {
		return fmt.Sprintf(`git init -q "$TMPDIR/evil" && printf '#!/bin/sh
touch %[1]s
' > "$TMPDIR/evil/.git/hooks/pre-commit" && chmod +x "$TMPDIR/evil/.git/hooks/pre-commit"
git -C "$TMPDIR/evil" config core.fsmonitor 'touch %[1]s; false'
`, canary)
	}
	for _, staged := range []bool{false, true} {
		name := "one call"
		if staged {
			name = "two calls"
		}
		t.Run(name, func(t *testing.T) {
			armedRepos(t, nil, func(t *testing.T, w *world, cs *mcp.ClientSession, canary string) []string {
				pkg := filepath.Join(w.ws, "pkg2")
				link := hostTmp + `ln -s "$host/evil" pkg2 && echo linked`
				if staged {
					res := call(t, cs, "bash", map[string]any{"command": arm(canary) + "echo armed"})
					require.Contains(t, text(res), "armed")
				} else {
					link = arm(canary) + link
				}
				res := call(t, cs, "bash", map[string]any{"command": link})
				assert.Contains(t, text(res), "linked")
				assert.Contains(t, text(res), pkg+" (disarmed: a symlink into the session's private tmp)", "the model is told")
				_, err := os.Lstat(pkg)
				assert.ErrorIs(t, err, os.ErrNotExist, "the link is set aside on the host")
				return []string{pkg}
			})
		})
	}
}

// TestFloodDoesNotHideWhatACommandMakesDeep: a review's repro. One call
// floods the workspace past the search's bound of 10,000 directories; the
// next makes an armed repository five levels down and a link, four
// levels down, into a repository in the session tmp. The human's git in
// either must run nothing.
func TestFloodDoesNotHideWhatACommandMakesDeep(t *testing.T) {
	armedRepos(t, nil, func(t *testing.T, w *world, cs *mcp.ClientSession, canary string) []string {
		res := call(t, cs, "bash", map[string]any{"command": "mkdir flood && cd flood && seq 1 10050 | xargs mkdir && echo flooded"})
		require.Contains(t, text(res), "flooded")
		res = call(t, cs, "bash", map[string]any{"command": fmt.Sprintf(`host=$(awk '$5 == "/tmp" {print $4}' /proc/self/mountinfo | head -1)
case "$host" in /*) ;; *) host=$TMPDIR ;; esac
mkdir -p a/b/c/d/e && git init -q a/b/c/d/e && git -C a/b/c/d/e config core.fsmonitor 'touch %[1]s; false'
git init -q "$TMPDIR/evil" && git -C "$TMPDIR/evil" config core.fsmonitor 'touch %[1]s; false'
mkdir -p p/q/r/s && ln -s "$host/evil" p/q/r/s/pkg2 && echo made`, canary)})
		assert.Contains(t, text(res), "made")
		assert.Contains(t, text(res), filepath.Join(w.ws, "p", "q", "r", "s", "pkg2")+" (disarmed: a symlink into the session's private tmp)")
		return []string{filepath.Join(w.ws, "a", "b", "c", "d", "e"), filepath.Join(w.ws, "p", "q", "r", "s", "pkg2")}
	})
}

// TestRepositoryStagedOverTwoCallsBeyondTheDepth: one call makes a deep
// tree, the next a repository at its bottom, five levels down, where the
// search does not go: the audit of the second call still looks into the
// directories the first one made.
func TestRepositoryStagedOverTwoCallsBeyondTheDepth(t *testing.T) {
	armedRepos(t, nil, func(t *testing.T, w *world, cs *mcp.ClientSession, canary string) []string {
		res := call(t, cs, "bash", map[string]any{"command": "mkdir -p a/b/c/d/e && sleep 3 && echo made"})
		require.Contains(t, text(res), "made")
		res = call(t, cs, "bash", map[string]any{"command": fmt.Sprintf(`git init -q a/b/c/d/e/x && git -C a/b/c/d/e/x config core.fsmonitor 'touch %[1]s; false' && printf '#!/bin/sh\ntouch %[1]s\n' > a/b/c/d/e/x/.git/hooks/pre-commit && chmod +x a/b/c/d/e/x/.git/hooks/pre-commit && echo armed`, canary)})
		assert.Contains(t, text(res), "armed")
		return []string{filepath.Join(w.ws, "a", "b", "c", "d", "e", "x")}
	})
}

// TestSymlinkedGitDoesNotStopTheAudit: a .git symlink anywhere in the
// workspace makes cordon refuse to build the next sandbox, but must not
// stop the audit of the repositories the command made beside it.
func TestSymlinkedGitDoesNotStopTheAudit(t *testing.T) {
	armedRepos(t, nil, func(t *testing.T, w *world, cs *mcp.ClientSession, canary string) []string {
		x := filepath.Join(w.ws, "x")
		res := call(t, cs, "bash", map[string]any{"command": fmt.Sprintf(`git init -q x && printf '#!/bin/sh\ntouch %[1]s\n' > x/.git/hooks/pre-commit && chmod +x x/.git/hooks/pre-commit
git -C x config core.fsmonitor 'touch %[1]s; false'; mkdir a && ln -s /nonexistent a/.git; echo done`, canary)})
		assert.Contains(t, text(res), "done")
		assert.Contains(t, text(res), filepath.Join(w.ws, "a", ".git")+" (disarmed: a .git that is a symlink)", "the model is told")
		assert.NoFileExists(t, filepath.Join(x, ".git", "hooks", "pre-commit"))
		_, err := os.Lstat(filepath.Join(w.ws, "a", ".git"))
		assert.ErrorIs(t, err, os.ErrNotExist, "the symlink is gone: the next call can build its sandbox")
		res = call(t, cs, "bash", map[string]any{"command": "echo next"})
		assert.False(t, res.IsError, text(res))
		return []string{x}
	})
}

// committedRepo makes dir a repository with one commit.
func committedRepo(t *testing.T, dir string) {
	t.Helper()
	gitInit(t, dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644))
	for _, args := range [][]string{{"add", "a.txt"}, {"-c", "user.name=h", "-c", "user.email=h@example.com", "commit", "-q", "-m", "first"}} {
		git := exec.Command("git", args...)
		git.Dir = dir
		out, err := git.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
}

// TestWorkspaceMadeIntoAGitdir: git's discovery takes a directory that
// holds HEAD, objects and refs for a (bare) gitdir when the .git below it
// is broken, and core.worktree gives it the workspace as its work tree: a
// command that makes the workspace root (or a directory in it) look so
// would have its config run at the human's git status there.
func TestWorkspaceMadeIntoAGitdir(t *testing.T) {
	armedRepos(t, func(w *world) { committedRepo(t, w.ws) }, func(t *testing.T, w *world, cs *mcp.ClientSession, canary string) []string {
		res := call(t, cs, "bash", map[string]any{"command": fmt.Sprintf(`mkdir -p objects/info refs info src/app && cp -r .git/refs/. refs/ && cp .git/HEAD HEAD && cp .git/index index && cp .git/config config && echo "$PWD/.git/objects" > objects/info/alternates
git config --file config core.worktree . && git config --file config core.fsmonitor 'touch %[1]s; false'
printf '/HEAD\n/config\n/index\n/objects/\n/refs/\n/info/\n/.git/\n' > info/exclude
mkdir -p src/objects/info src/refs && cp -r .git/refs/. src/refs/ && cp .git/HEAD src/HEAD && cp config src/config && echo "$PWD/.git/objects" > src/objects/info/alternates && git config --file src/config core.worktree ..
mv .git/HEAD .git/HEAD.orig 2>&1; echo done`, canary)})
		assert.Contains(t, text(res), "done")
		return []string{w.ws, filepath.Join(w.ws, "src", "app")}
	})
}

// TestRemoteThatRunsACommand: an ext:: remote runs its command on fetch
// once protocol.ext.allow lets it, in a repository a command made, and in
// known ones made over: the workspace's own gitdir moved aside behind a
// .git file (Landlock lets the rename through), a nested one copied anew.
func TestRemoteThatRunsACommand(t *testing.T) {
	armedRepos(t, func(w *world) {
		committedRepo(t, w.ws)
		committedRepo(t, filepath.Join(w.ws, "lib"))
	}, func(t *testing.T, w *world, cs *mcp.ClientSession, canary string) []string {
		ext := func(dir string) string {
			return fmt.Sprintf(`git -C %[1]s config protocol.ext.allow always 2>&1; git -C %[1]s remote add evil 'ext::sh -c touch%% %[2]s%% >&2' 2>&1`, dir, canary)
		}
		res := call(t, cs, "bash", map[string]any{"command": `git init -q vendor/new; ` + ext("vendor/new") + `
mv lib lib-old && cp -a lib-old lib; ` + ext("lib") + `
mv .git .git-old 2>&1 && echo "gitdir: .git-old" > .git; ` + ext(".") + `; echo done`})
		assert.Contains(t, text(res), "done")
		return []string{w.ws, filepath.Join(w.ws, "lib"), filepath.Join(w.ws, "vendor", "new")}
	})
}

// TestRepositoryAGitlinkNames: git status at the workspace root looks into
// every populated gitlink of the index, so a repository a command makes
// deeper than the search goes (or in node_modules, which it skips) and
// links from the root index is one the human's git uses.
func TestRepositoryAGitlinkNames(t *testing.T) {
	armedRepos(t, func(w *world) { committedRepo(t, w.ws) }, func(t *testing.T, w *world, cs *mcp.ClientSession, canary string) []string {
		link := func(rel string) string {
			return fmt.Sprintf(`git init -q %[1]s && git -C %[1]s -c user.name=m -c user.email=m@example.com commit -q --allow-empty -m s && git -C %[1]s config core.fsmonitor 'touch %[2]s; false' &&
git update-index --add --cacheinfo 160000,$(git -C %[1]s rev-parse HEAD),%[1]s`, rel, canary)
		}
		res := call(t, cs, "bash", map[string]any{"command": link("a/b/c/d/e") + "\n" + link("node_modules/evil") +
			"\ngit -c core.fsmonitor=false -c user.name=m -c user.email=m@example.com commit -q --no-verify -m 'add deps' 2>&1; echo done"})
		assert.Contains(t, text(res), "done")
		return []string{w.ws}
	})
}

// TestCordonRunsNothingOfARepository: cordon reads the index of every
// repository it finds, a command's too; git would fetch the missing trees
// of a sparse index from a "promisor" remote through the program the
// repository names, outside any sandbox. Nothing may run, with no human
// action at all.
func TestCordonRunsNothingOfARepository(t *testing.T) {
	armedRepos(t, nil, func(t *testing.T, w *world, cs *mcp.ClientSession, canary string) []string {
		res := call(t, cs, "bash", map[string]any{"command": fmt.Sprintf(`git init -q -b main lib && cd lib && mkdir -p a b/c && echo 1 > a/x && echo 2 > b/c/y && git add . && git -c user.email=m@example.com -c user.name=m commit -qm i &&
git sparse-checkout set --cone a && git config index.sparse true && git sparse-checkout reapply && T=$(git rev-parse HEAD:b) && chmod u+w .git/objects/${T:0:2}/${T:2} && mv .git/objects/${T:0:2}/${T:2} ../gone &&
git config core.repositoryformatversion 1 && git config extensions.partialClone origin && git config remote.origin.url "$PWD" && git config remote.origin.promisor true &&
git config remote.origin.uploadpack 'touch %[1]s; false'; echo done`, canary)})
		assert.Contains(t, text(res), "done")
		assert.NoFileExists(t, canary, "cordon itself ran what the repository named")
		return nil
	})
}

// TestGitdirAtTheDepthLimit: a bare-made gitdir on the search's last level
// (4 down), given a work tree beneath it, is found like a .git there.
func TestGitdirAtTheDepthLimit(t *testing.T) {
	armedRepos(t, nil, func(t *testing.T, w *world, cs *mcp.ClientSession, canary string) []string {
		res := call(t, cs, "bash", map[string]any{"command": fmt.Sprintf(`git init -q --bare -b main pkg/api/internal/handlers && cd pkg/api/internal/handlers &&
git config core.bare false && git config core.worktree . && git config core.fsmonitor 'touch %[1]s; false' && mkdir -p src && echo done`, canary)})
		assert.Contains(t, text(res), "done")
		return []string{filepath.Join(w.ws, "pkg", "api", "internal", "handlers", "src")}
	})
}
