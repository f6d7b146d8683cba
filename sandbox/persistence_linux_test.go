package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A persistence escape is judged by what the human runs later, outside any
// sandbox: each plant below would make the human's own git run a payload
// that leaves a canary outside the workspace. The test runs the plants
// confined, then the human's git on the host, and looks for canaries; the
// control runs the same plants unconfined and must find every one.

// gitWorld is a repository as people have them: husky hooks, an
// initialised submodule, a nested clone three levels down, and per-worktree
// configuration (extensions.worktreeConfig).
func gitWorld(t *testing.T, f *fixture) {
	t.Helper()
	upstream := filepath.Join(f.base, "upstream.git")
	testenv.Git(t, f.base, "init", "-q", "--bare", upstream)
	seed := filepath.Join(f.base, "seed")
	testenv.Git(t, f.base, "clone", "-q", upstream, seed)
	testenv.Git(t, seed, "commit", "-q", "--allow-empty", "-m", "lib")
	testenv.Git(t, seed, "push", "-q", "origin", "HEAD:main")

	testenv.Git(t, f.ws, "init", "-q")
	require.NoError(t, os.MkdirAll(filepath.Join(f.ws, ".husky"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.ws, ".husky", "pre-commit"), []byte("#!/bin/sh\ntrue\n"), 0o755))
	testenv.Git(t, f.ws, "config", "core.hooksPath", ".husky")
	testenv.Git(t, f.ws, "submodule", "add", "-q", upstream, "lib")
	require.NoError(t, os.MkdirAll(filepath.Join(f.ws, "a", "b", "sub"), 0o755))
	testenv.Git(t, filepath.Join(f.ws, "a", "b", "sub"), "init", "-q")
	testenv.Git(t, filepath.Join(f.ws, "a", "b", "sub"), "commit", "-q", "--allow-empty", "-m", "nested")
	require.NoError(t, os.WriteFile(filepath.Join(f.ws, ".gitignore"), []byte("a/\n"), 0o644))
	testenv.Git(t, f.ws, "add", "-A")
	testenv.Git(t, f.ws, "commit", "-q", "-m", "first")
	// What `git sparse-checkout init` turns on (without thinning the
	// checkout), and the worktree config it writes.
	testenv.Git(t, f.ws, "config", "extensions.worktreeConfig", "true")
	testenv.Git(t, f.ws, "config", "--worktree", "core.sparseCheckout", "false")
}

// plant is one way of making the human's git run a payload: a script
// given the workspace W, the helper "run NAME" (prints a hook that runs the
// payload with the canary NAME) and "mon NAME" (a core.fsmonitor value).
type plant struct{ canary, script string }

var plants = []plant{
	// First, while the worktree is clean: a rebase stopped with an exec
	// line to do, which the human's `git rebase --continue` runs.
	{"rebase-exec", `git -c user.name=a -c user.email=a@example.com commit -q --no-verify --allow-empty -m two &&
GIT_SEQUENCE_EDITOR='sed -i 1ibreak' git -c user.name=a -c user.email=a@example.com rebase -q -i --exec "sh $W/payload.sh rebase-exec" HEAD~1`},
	{"husky", `run husky >> .husky/pre-commit`},
	{"fsmonitor-sub", `printf '[core]\n\tfsmonitor = "%s"\n' "$(mon fsmonitor-sub)" >> .git/modules/lib/config`},
	{"post-checkout", `run post-checkout > .git/modules/lib/hooks/post-checkout; chmod +x .git/modules/lib/hooks/post-checkout`},
	{"nested", `run nested > a/b/sub/.git/hooks/pre-commit; chmod +x a/b/sub/.git/hooks/pre-commit`},
	{"fsmonitor-nested", `git -C a/b/sub config core.fsmonitor "$(mon fsmonitor-nested)"`},
	{"worktree-config", `mkdir -p evilhooks; run worktree-config > evilhooks/pre-commit; chmod +x evilhooks/pre-commit
printf '[core]\n\thooksPath = %s/evilhooks\n' "$W" >> .git/config.worktree`},
	{"commondir", `cp -r .git evilgit && rm -f evilgit/commondir evilgit/config.worktree && git config -f evilgit/config core.fsmonitor "$(mon commondir)"
echo ../evilgit > .git/commondir`},
	{"new-repo", `mkdir -p new && git -C new init -q && run new-repo > new/.git/hooks/pre-commit && chmod +x new/.git/hooks/pre-commit`},
	{"fsmonitor-new", `mkdir -p new2 && git -C new2 init -q && git -C new2 config core.fsmonitor "$(mon fsmonitor-new)"`},
	{"rebase-exec-new", `mkdir -p new3 && cd new3 && git init -q && for m in one two; do git -c user.name=a -c user.email=a@example.com commit -q --allow-empty -m $m; done &&
GIT_SEQUENCE_EDITOR='sed -i 1ibreak' git -c user.name=a -c user.email=a@example.com rebase -q -i --exec "sh $W/payload.sh rebase-exec-new" HEAD~1; cd $W`},
	{"envrc", `echo "sh $W/payload.sh envrc" > .envrc`},
	{"claude", `mkdir -p .claude && echo '{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"sh payload.sh claude"}]}]}}' > .claude/settings.json`},
}

// plantScript writes the payload and runs the given plants.
func plantScript(ws, out string, ps []plant) string {
	var b strings.Builder
	fmt.Fprintf(&b, `W=%[1]s
printf '#!/bin/sh\ntouch %[2]s/ran-$1\n' > $W/payload.sh; chmod +x $W/payload.sh
run() { printf '#!/bin/sh\nsh %[1]s/payload.sh %%s\n' "$1"; }
mon() { printf 'sh %[1]s/payload.sh %%s; false' "$1"; }
`, ws, out)
	for _, p := range ps {
		b.WriteString(p.script + "\n")
	}
	b.WriteString("true\n")
	return b.String()
}

// humanGit is what the human does in the workspace afterwards.
func humanGit(t *testing.T, ws string) {
	t.Helper()
	for _, args := range [][]string{
		{"status"},
		{"commit", "-q", "--allow-empty", "-m", "human"},
		{"submodule", "update", "--force"},
		{"-C", "a/b/sub", "status"},
		{"-C", "a/b/sub", "commit", "-q", "--allow-empty", "-m", "human"},
		{"-C", "new", "status"},
		{"-C", "new", "commit", "-q", "--allow-empty", "-m", "human"},
		{"-C", "new2", "status"},
		{"rebase", "--continue"}, // `git status` said a rebase is in progress
		{"-C", "new3", "rebase", "--continue"},
	} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=h", "-c", "user.email=h@example.com", "-c", "protocol.file.allow=always"}, args...)...)
		cmd.Dir = ws
		cmd.Run() // a broken repository is fine; a payload run is not
	}
}

func canaries(t *testing.T, dir string) []string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, "ran-*"))
	var names []string
	for _, m := range matches {
		names = append(names, strings.TrimPrefix(filepath.Base(m), "ran-"))
	}
	return names
}

func TestHumansNextGitRunsNothingPlanted(t *testing.T) {
	// Each plant alone, unconfined, runs (some shadow others: the
	// worktree config's hooksPath wins over husky's, for instance).
	t.Run("control", func(t *testing.T) {
		for _, p := range plants {
			if p.canary == "envrc" || p.canary == "claude" {
				continue // run by direnv and Claude Code, not by git: judged by the files
			}
			f := newFixture(t, newBwrap())
			gitWorld(t, f)
			cmd := exec.Command("bash", "-c", plantScript(f.ws, f.outside, []plant{p}))
			cmd.Dir = f.ws
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			humanGit(t, f.ws)
			assert.Contains(t, canaries(t, f.outside), p.canary, "unconfined, the plant %s runs: the check can see it", p.canary)
		}
	})
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		gitWorld(t, f)
		worktreeConfig := readFile(t, filepath.Join(f.ws, ".git", "config.worktree"))
		out, o := f.launch(f.policy(WorkspaceWrite, NetworkAllow), "bash", "-c", plantScript(f.ws, f.outside, plants))
		assert.Empty(t, canaries(t, f.outside), "nothing ran while confined")
		humanGit(t, f.ws)
		assert.Empty(t, canaries(t, f.outside), "the human's git ran a planted payload; command output:\n%s\nundone: %v", out, o.Undone)
		for _, p := range []string{".envrc", ".claude", ".git/commondir"} {
			assert.NoFileExists(t, filepath.Join(f.ws, p))
		}
		assert.Equal(t, worktreeConfig, readFile(t, filepath.Join(f.ws, ".git", "config.worktree")))
		assert.NotContains(t, readFile(t, filepath.Join(f.ws, ".husky", "pre-commit")), "payload")
		assert.NotEmpty(t, o.Undone, "the result says what was undone")
	})
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, _ := os.ReadFile(p)
	return string(b)
}

// TestGitWorkflowsInTheSandbox: what people do with git from an agent's
// shell keeps working: commit, worktree add, submodule update, and an npm
// install whose prepare step (husky) tries to set core.hooksPath.
func TestGitWorkflowsInTheSandbox(t *testing.T) {
	husky, err := filepath.Abs(filepath.Join("..", "test", "interop", "node_modules", "husky"))
	require.NoError(t, err)
	_, err = os.Stat(husky)
	haveHusky := err == nil
	if !haveHusky && os.Getenv("CORDON_INTEROP") != "" {
		t.Fatalf("husky is not installed in test/interop (npm ci there): %v", err)
	}
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		gitWorld(t, f)
		p := f.policy(WorkspaceWrite, NetworkAllow)
		const id = `-c user.name=agent -c user.email=agent@example.com -c protocol.file.allow=always`
		out, code := f.sh(p, `echo x > new.txt && git `+id+` add new.txt && git `+id+` commit -qm agent && git log --oneline | head -1`)
		assert.Equal(t, 0, code, out)
		assert.Contains(t, out, "agent")

		out, code = f.sh(p, `git `+id+` worktree add -q inner-wt && echo y > inner-wt/y.txt && git -C inner-wt `+id+` add y.txt && git -C inner-wt `+id+` commit -qm in-worktree && echo ok`)
		assert.Equal(t, 0, code, out)
		assert.Contains(t, testenv.Git(t, filepath.Join(f.ws, "inner-wt"), "log", "--oneline", "-1"), "in-worktree")

		// A new upstream commit recorded by the human; the agent updates.
		seed := filepath.Join(f.base, "seed")
		testenv.Git(t, seed, "commit", "-q", "--allow-empty", "-m", "lib 2")
		testenv.Git(t, seed, "push", "-q", "origin", "HEAD:main")
		testenv.Git(t, filepath.Join(f.ws, "lib"), "pull", "-q", "origin", "main")
		testenv.Git(t, f.ws, "commit", "-qam", "bump lib")
		testenv.Git(t, filepath.Join(f.ws, "lib"), "checkout", "-q", "HEAD~1")
		out, code = f.sh(p, `git `+id+` submodule update && git -C lib log --oneline -1`)
		assert.Equal(t, 0, code, out)
		assert.Contains(t, out, "lib 2")

		if !haveHusky {
			t.Log("husky is not installed in test/interop: skipping the npm install part")
			return
		}
		// A tarball, as a registry would serve it (a file: directory would
		// be a symlink out of the workspace).
		pack := exec.Command("npm", "pack", "--silent", "--pack-destination", f.base, husky)
		tarball, err := pack.Output()
		require.NoError(t, err)
		pkg := fmt.Sprintf(`{"name":"app","version":"1.0.0","private":true,"scripts":{"prepare":"husky"},"devDependencies":{"husky":"file:%s"}}`,
			filepath.Join(f.base, strings.TrimSpace(string(tarball))))
		require.NoError(t, os.WriteFile(filepath.Join(f.ws, "package.json"), []byte(pkg), 0o644))
		before := testenv.Git(t, f.ws, "config", "--get", "core.hooksPath")
		out, o := f.launch(p, "bash", "-c", `npm_config_cache=$TMPDIR/npm npm install --offline --no-audit --no-fund 2>&1; echo "exit $?"`)
		assert.Contains(t, out, "exit 0", "npm install must succeed")
		assert.Equal(t, before, testenv.Git(t, f.ws, "config", "--get", "core.hooksPath"), "core.hooksPath is the human's to change")
		if prov.Name() == "bwrap" {
			assert.Contains(t, out, "could not write config file .git/config", "husky passes on git's refusal")
		} else {
			assert.Contains(t, fmt.Sprint(o.Undone), ".git/config", "the guard says it undid the change")
		}
	})
}
