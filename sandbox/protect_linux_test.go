package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cordonhq/cordon/internal/pathx"
	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProtectedPathsBwrap(t *testing.T) {
	prov := newBwrap()
	f := newFixture(t, prov)
	require.NoError(t, os.MkdirAll(filepath.Join(f.ws, ".git", "hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.ws, ".git", "config"), []byte("[core]\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.ws, ".bashrc"), []byte("# rc\n"), 0o644))
	extraProtected := "deploy/keys"
	require.NoError(t, os.MkdirAll(filepath.Join(f.ws, "deploy"), 0o755))
	svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: f.ws, Home: f.home,
		StateDir: f.state, ConfigDir: filepath.Join(f.home, ".config", "cordon"), ProtectedNames: []string{extraProtected}}}
	p, err := svc.Resolve(Request{TmpDir: f.tmp})
	require.NoError(t, err)

	// Existing protected paths are read-only binds: the write fails. The
	// missing ones are guarded: the command may make them, and they are
	// gone again, reported as undone, when the call returns.
	attempts := map[string]string{
		"write .git/config":        `printf evil >> .git/config`,
		"create a git hook":        `printf '#!/bin/sh\nevil' > .git/hooks/pre-commit`,
		"replace .git/hooks":       `mv .git/hooks .git/hooks.old`,
		"append to .bashrc":        `printf evil >> .bashrc`,
		"remove .bashrc":           `rm -f .bashrc`,
		"create .profile":          `printf evil > .profile`,
		"create .cordon config":    `mkdir -p .cordon && printf 'mode="danger-full-access"' > .cordon/config.toml`,
		"create .vscode tasks":     `mkdir -p .vscode && printf '{}' > .vscode/tasks.json`,
		"create .mcp.json":         `printf '{}' > .mcp.json`,
		"create configured path":   `mkdir -p deploy/keys && printf k > deploy/keys/id`,
		"cordon config dir":        `mkdir -p "$1" && printf x > "$1/config.toml"`,
		"read the state directory": `ls "$2" && cat "$2"/*`,
	}
	before := testenv.Snapshot(t, f.ws, f.home)
	for name, script := range attempts {
		t.Run(name, func(t *testing.T) {
			out, o := f.launch(p, "/bin/sh", "-c", script, "sh", filepath.Join(f.home, ".config", "cordon"), f.state)
			assert.True(t, o.ExitCode != 0 || len(o.Undone) > 0, "neither refused nor undone: %s", out)
			assert.Equal(t, before, testenv.Snapshot(t, f.ws, f.home), "the file system changed or a stub was left behind")
		})
	}
	t.Run("ordinary writes and git still work", func(t *testing.T) {
		out, code := f.sh(p, `printf ok > normal.txt && mkdir -p .git/objects && printf o > .git/objects/x && cat normal.txt`)
		assert.Equal(t, 0, code, out)
		assert.Equal(t, "ok", out)
	})
	t.Run("read-deny hidden", func(t *testing.T) {
		out, code := f.sh(p, `cat "$1"`, f.secret)
		assert.NotEqual(t, 0, code)
		assert.NotContains(t, out, "SECRET-CANARY")
		out, _ = f.sh(p, `ls -a "$1"`, filepath.Dir(f.secret))
		assert.NotContains(t, out, "id_canary")
	})
}

func TestNoStubsLeftBehind(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		before := testenv.Snapshot(t, f.ws)
		p := f.policy(WorkspaceWrite, NetworkAllow)
		_, code := f.sh(p, `true`)
		require.Equal(t, 0, code)
		_, code = f.sh(f.policy(ReadOnly, NetworkAllow), `true`)
		require.Equal(t, 0, code)
		assert.Equal(t, before, testenv.Snapshot(t, f.ws), "a run left files or directories in the workspace")
	})
}

func TestSymlinkedGitRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		require.NoError(t, os.MkdirAll(filepath.Join(f.outside, "realgit", "hooks"), 0o755))
		require.NoError(t, os.Symlink(filepath.Join(f.outside, "realgit"), filepath.Join(f.ws, ".git")))
		p := f.policy(WorkspaceWrite, NetworkAllow)
		cp, err := p.ToConfined()
		require.NoError(t, err)
		_, err = prov.Confine([]string{"true"}, cp)
		assert.True(t, errors.Is(err, errProtectedSymlink), "got %v", err)
	})
}

func TestLandlockReportsProtectionAsPartial(t *testing.T) {
	enf, un := newLandlock().Limits()
	assert.Equal(t, EnforcementPartial, enf)
	assert.Contains(t, un[0], "read-deny")
	assert.Contains(t, un[1], "protected paths")
}

func TestConcurrentRunsStayGuarded(t *testing.T) {
	prov := newBwrap()
	f := newFixture(t, prov)
	p := f.policy(WorkspaceWrite, NetworkAllow)
	cp, err := p.ToConfined()
	require.NoError(t, err)
	// A long run plants a .bashrc after a short one has ended: the short
	// one must not end the guard of the long one.
	long, err := prov.Confine([]string{"/bin/sh", "-c", `sleep 0.5; printf evil > .bashrc`}, cp)
	require.NoError(t, err)
	l, err := long.newLaunch()
	require.NoError(t, err)
	l.Cmd.Dir = f.ws
	require.NoError(t, l.Start())
	_, code := f.sh(p, `true`)
	require.Equal(t, 0, code)
	o, err := l.Wait()
	require.NoError(t, err)
	// The long run ends last: it is the one that undoes the .bashrc.
	assert.NotEmpty(t, o.Undone)
	assert.NoFileExists(t, filepath.Join(f.ws, ".bashrc"))
}

// TestReadDenyInsideAWritableRootCannotBeMoved: an extra read-deny entry
// in the workspace is hidden by a mount, which a renamed parent would
// carry along, out of the place where the next call's policy looks for the
// entry. The parents are pinned: the renames fail. Nor does cordon's own
// audit, which runs outside the sandbox, move one when a command dresses
// its parent as a repository whose config or hooks it would set aside:
// the secret is still where the list names it, and hidden, when the next
// call starts.
func TestReadDenyInsideAWritableRootCannotBeMoved(t *testing.T) {
	// The secrets, by path in the workspace: a directory's file and files
	// whose parents bear the names of a gitdir's config and hooks.
	secrets := map[string]string{
		"deploy/prod/keys/id":   "DIR-CANARY",
		"notes/token.txt":       "FILE-CANARY",
		"config/master.key":     "RAILS-CANARY",
		"ops/hooks/slack.env":   "HOOK-CANARY",
		"a/b/config/c/d":        "DEEP-CANARY",
		"svc/config":            "CONFIG-FILE-CANARY",
		"lib/.git/hooks/secret": "GITDIR-CANARY",
	}
	entries := []string{"deploy/prod/keys", "notes/token.txt", "config/master.key", "ops/hooks/slack.env", "a/b/config/c/d", "svc/config", "lib/.git/hooks/secret"}
	type setup struct {
		f      *fixture
		policy func() ExecutionPolicy
		before map[string]string
	}
	start := func(t *testing.T) setup {
		f := newFixture(t, newBwrap())
		require.NoError(t, os.MkdirAll(filepath.Join(f.ws, "other"), 0o755))
		for rel, canary := range secrets {
			p := filepath.Join(f.ws, rel)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(canary+"\n"), 0o600))
		}
		var deny []string
		for _, e := range entries {
			deny = append(deny, filepath.Join(f.ws, e))
		}
		return setup{f: f, before: testenv.Snapshot(t, f.ws), policy: func() ExecutionPolicy {
			svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: f.ws, Home: f.home,
				StateDir: f.state, ConfigDir: filepath.Join(f.home, ".config", "cordon"),
				ExtraReadDeny: deny}}
			p, err := svc.Resolve(Request{TmpDir: f.tmp})
			require.NoError(t, err)
			return p
		}}
	}
	// Every file of the workspace, wherever it is now.
	const readAll = `find . -type f -exec cat {} + 2>&1`
	const gitdir = `mkdir -p objects refs && echo 'ref: refs/heads/main' > HEAD`
	attempts := map[string]string{
		"rename the parent":      `mv deploy/prod deploy/moved`,
		"rename the grandparent": `mv deploy moved`,
		"rename a file's parent": `mv notes moved`,
		"rename the entry":       `mv deploy/prod/keys moved`,
		"rename the file":        `mv notes/token.txt moved`,
		"remove the parent":      `rm -rf deploy/prod`,
		"move the parent down":   `mkdir -p moved && mv deploy moved/`,
		// The audit would set aside a new repository's config (here a
		// directory) and every hook.
		"dress the root as a gitdir": gitdir,
		"dress a parent as a gitdir": `cd ops && ` + gitdir,
		"dress a file's parent":      `cd svc && ` + gitdir,
		"a gitfile naming a parent":  `(cd a/b && ` + gitdir + `) && mkdir z && echo 'gitdir: ../a/b' > z/.git`,
		// lib/.git is a known repository already (its hooks exist): its
		// config and hooks are protected, and its HEAD may stay.
		"complete a gitdir around one": `cd lib/.git && ` + gitdir,
	}
	disarmedWhole := []string{"dress the root as a gitdir", "dress a parent as a gitdir", "dress a file's parent", "a gitfile naming a parent"}
	for name, script := range attempts {
		t.Run(name, func(t *testing.T) {
			s := start(t)
			out, o := s.f.launch(s.policy(), "/bin/sh", "-c", script+`; `+readAll)
			assert.NotContains(t, out, "CANARY")
			require.NoError(t, o.GuardErr)
			after := testenv.Snapshot(t, s.f.ws)
			for rel := range secrets {
				path := filepath.Join(s.f.ws, rel)
				assert.Equal(t, s.before[path], after[path], "%s moved or changed: the next call would not look for it there", path)
			}
			if slices.Contains(disarmedWhole, name) {
				// A repository disarmed whole: no HEAD of the command's is left.
				for path := range after {
					assert.NotEqual(t, "HEAD", filepath.Base(path), "%s: a repository left armed", path)
				}
			}
			out, _ = s.f.sh(s.policy(), readAll)
			assert.NotContains(t, out, "CANARY", "the next call reads the secret")
		})
	}
	t.Run("the rest of the workspace still moves", func(t *testing.T) {
		s := start(t)
		out, code := s.f.sh(s.policy(), `mv other other2 && mv other2 other && mv file.txt f2 && mv f2 file.txt && cat file.txt`)
		assert.Equal(t, 0, code, out)
		assert.Contains(t, out, "inside")
		assert.Equal(t, s.before, testenv.Snapshot(t, s.f.ws))
	})
}

// TestReadDenyThroughASymlinkStaysHidden: a read-deny entry reached
// through a symlink in the workspace (~/.ssh -> dotfiles/ssh). A command
// that points the symlink elsewhere, replaces or renames it, would make
// the next call's list hide the new place; the symlink is guarded, put
// back after the call, and the next call still hides the secret.
func TestReadDenyThroughASymlinkStaysHidden(t *testing.T) {
	type setup struct {
		f      *fixture
		policy func() ExecutionPolicy
		links  map[string]string // path → target
	}
	start := func(t *testing.T, prov Backend) setup {
		f := newFixture(t, prov)
		// The home is the workspace, its ~/.ssh a dotfiles symlink; an
		// extra entry reaches its secret through two symlinks, one
		// nested.
		require.NoError(t, os.RemoveAll(filepath.Join(f.home, ".ssh")))
		for rel, canary := range map[string]string{"dotfiles/ssh/id_ed25519": "SSH-CANARY", ".private/keys/id": "LINK-CANARY"} {
			p := filepath.Join(f.home, rel)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(canary+"\n"), 0o600))
		}
		links := map[string]string{
			filepath.Join(f.home, ".ssh"):            "dotfiles/ssh",
			filepath.Join(f.home, "cfg", "secrets"):  "../keys-link",
			filepath.Join(f.home, "keys-link"):       ".private/keys",
			filepath.Join(f.home, "other", "a-link"): "..",
		}
		for l, target := range links {
			require.NoError(t, os.MkdirAll(filepath.Dir(l), 0o755))
			require.NoError(t, os.Symlink(target, l))
		}
		return setup{f: f, links: links, policy: func() ExecutionPolicy {
			// (A workspace at the home is refused, homerule.go: the
			// dotfiles directory is the workspace, ~/.ssh an extra entry.)
			svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: f.home,
				StateDir: f.state, ConfigDir: filepath.Join(f.home, ".config", "cordon"),
				ExtraReadDeny: []string{filepath.Join(f.home, ".ssh"), filepath.Join(f.home, "cfg", "secrets")}}}
			p, err := svc.Resolve(Request{TmpDir: f.tmp})
			require.NoError(t, err)
			return p
		}}
	}
	const readAll = `find -L . -type f -exec cat {} + 2>&1`
	attempts := map[string]string{
		"repoint ~/.ssh":             `rm .ssh && mkdir empty && ln -s empty .ssh`,
		"replace ~/.ssh":             `rm .ssh && mkdir .ssh`,
		"rename ~/.ssh":              `mv .ssh ssh-was`,
		"repoint the nested link":    `ln -sfn /nonexistent keys-link`,
		"repoint the entry's link":   `rm cfg/secrets && ln -s ../other cfg/secrets`,
		"rename the entry's parent":  `mv cfg cfg2`,
		"rename through a parent":    `mv other/a-link/cfg other/a-link/cfg2`,
		"replace the entry's parent": `mv cfg cfg2; mkdir cfg && ln -s ../other cfg/secrets`,
	}
	for name, script := range attempts {
		t.Run(name, func(t *testing.T) {
			s := start(t, newBwrap())
			out, o := s.f.launch(s.policy(), "/bin/sh", "-c", `cd "$1" && { `+script+`; }; `+readAll, "sh", s.f.home)
			assert.NotContains(t, out, "CANARY")
			require.NoError(t, o.GuardErr)
			for l, target := range s.links {
				got, err := os.Readlink(l)
				if assert.NoError(t, err, "%s is no longer a symlink", l) {
					assert.Equal(t, target, got, "%s points elsewhere", l)
				}
			}
			out, _ = s.f.sh(s.policy(), `cd "$1" && `+readAll, s.f.home)
			assert.NotContains(t, out, "CANARY", "the next call reads the secret")
		})
	}
	t.Run("put back under Landlock too", func(t *testing.T) {
		// (Landlock refuses a workspace that holds cordon's config: the
		// home is not the workspace here.)
		f := newFixture(t, newLandlock())
		keys := filepath.Join(f.ws, ".private", "keys")
		require.NoError(t, os.MkdirAll(keys, 0o755))
		link := filepath.Join(f.ws, "secrets")
		require.NoError(t, os.Symlink(".private/keys", link))
		svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: f.ws, Home: f.home,
			StateDir: f.state, ConfigDir: filepath.Join(f.home, ".config", "cordon"), ExtraReadDeny: []string{link}}}
		p, err := svc.Resolve(Request{TmpDir: f.tmp})
		require.NoError(t, err)
		_, o := f.launch(p, "/bin/sh", "-c", `cd "$1" && ln -sfn /nonexistent secrets`, "sh", f.ws)
		require.NoError(t, o.GuardErr)
		got, err := os.Readlink(link)
		require.NoError(t, err)
		assert.Equal(t, ".private/keys", got)
	})
}

// TestReadDenyRemembersWhereAnEntryLed: a call that starts while another
// call's command has pointed a symlink elsewhere (its guard not ended yet)
// hides both places.
func TestReadDenyRemembersWhereAnEntryLed(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	for _, d := range []string{"dotfiles/ssh", "empty"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	link := filepath.Join(ws, ".ssh")
	require.NoError(t, os.Symlink("dotfiles/ssh", link))
	svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: ws, Home: ws}}
	first, err := svc.Resolve(Request{})
	require.NoError(t, err)
	was := filepath.Join(pathx.CanonicalOrClean(ws), "dotfiles", "ssh")
	assert.Contains(t, first.ReadDeny, was)
	assert.Contains(t, first.findings().readDenyLinks, link)

	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink("empty", link))
	then, err := svc.Resolve(Request{})
	require.NoError(t, err)
	assert.Contains(t, then.ReadDeny, was, "the place the entry led to before is no longer hidden")
	assert.Contains(t, then.ReadDeny, filepath.Join(pathx.CanonicalOrClean(ws), "empty"))

	// Pointed at the workspace itself, it is not remembered: the rest of
	// the process would have the workspace hidden.
	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(".", link))
	_, err = svc.Resolve(Request{})
	require.NoError(t, err)
	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink("dotfiles/ssh", link))
	last, err := svc.Resolve(Request{})
	require.NoError(t, err)
	assert.NotContains(t, last.ReadDeny, pathx.CanonicalOrClean(ws))
	assert.Contains(t, last.ReadDeny, was)
}

func TestLinksOnTheWay(t *testing.T) {
	base := pathx.CanonicalOrClean(t.TempDir())
	require.NoError(t, os.MkdirAll(filepath.Join(base, "real", "dir"), 0o755))
	require.NoError(t, os.Symlink("real", filepath.Join(base, "a")))
	require.NoError(t, os.Symlink(filepath.Join(base, "a", "dir"), filepath.Join(base, "b")))
	require.NoError(t, os.Symlink("b/../dir", filepath.Join(base, "up")))
	require.NoError(t, os.Symlink("loop2", filepath.Join(base, "loop2")))
	links := func(p string) []string { l, _ := linksOnTheWay(p); return l }
	assert.Equal(t, []string{filepath.Join(base, "b"), filepath.Join(base, "a")}, links(filepath.Join(base, "b", "x", "y")))
	// b/.. is the parent of where b leads, as the kernel reads it.
	l, dirs := linksOnTheWay(filepath.Join(base, "up"))
	assert.Equal(t, []string{filepath.Join(base, "up"), filepath.Join(base, "b"), filepath.Join(base, "a")}, l)
	assert.Contains(t, dirs, filepath.Join(base, "real", "dir"), "the directory a `..` stepped out of")
	assert.Empty(t, links(filepath.Join(base, "real", "dir")))
	assert.Equal(t, []string{filepath.Join(base, "loop2")}, links(filepath.Join(base, "loop2", "x")), "a loop ends at the kernel's bound")
}

// TestReadDenyThroughDotDot: a `..` in a symlink's target steps out of a
// directory that is no ancestor of the secret (tok -> sub/../real/token):
// replaced by a symlink, it would lead a new cordon process elsewhere. It
// is pinned.
func TestReadDenyThroughDotDot(t *testing.T) {
	f := newFixture(t, newBwrap())
	token := filepath.Join(f.ws, "real", "token.txt")
	require.NoError(t, os.MkdirAll(filepath.Dir(token), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(f.ws, "sub"), 0o755))
	require.NoError(t, os.WriteFile(token, []byte("DOTDOT-CANARY\n"), 0o600))
	require.NoError(t, os.Symlink("sub/../real/token.txt", filepath.Join(f.ws, "tok")))
	resolve := func() ExecutionPolicy {
		svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: f.ws, Home: f.home,
			StateDir: f.state, ConfigDir: filepath.Join(f.home, ".config", "cordon"),
			ExtraReadDeny: []string{filepath.Join(f.ws, "tok")}}}
		p, err := svc.Resolve(Request{TmpDir: f.tmp})
		require.NoError(t, err)
		return p
	}
	out, _ := f.sh(resolve(), `cd "$1" && rmdir sub; mv sub sub2; mkdir -p x/y x/real && ln -s x/y sub; cat real/token.txt`, f.ws)
	assert.NotContains(t, out, "CANARY")
	fi, err := os.Lstat(filepath.Join(f.ws, "sub"))
	require.NoError(t, err)
	assert.True(t, fi.IsDir(), "sub was replaced")
	// A new cordon process remembers nothing: the entry still leads to
	// the secret.
	readDenyPlaces.Lock()
	clear(readDenyPlaces.m)
	readDenyPlaces.Unlock()
	assert.Contains(t, resolve().ReadDeny, pathx.CanonicalOrClean(token))
}

// TestReadDenyEntryNotMadeByACommand: a read-deny entry in the workspace
// that does not exist yet cannot be made by a command: made as a hard
// link to a file the command reads, it would show that file whatever the
// human later writes into the entry in place (an editor, kubectl's
// os.WriteFile). The guard removes it after the call, on both backends.
func TestReadDenyEntryNotMadeByACommand(t *testing.T) {
	attempts := map[string]string{
		"a file entry as a hard link":         `: > notes.txt && ln notes.txt .env`,
		"a file in a directory entry":         `mkdir -p deploy/keys && : > notes.txt && ln notes.txt deploy/keys/id`,
		"a directory entry as a symlink":      `mkdir -p deploy && ln -s .. deploy/keys`,
		"a file entry as a symlink to a file": `: > notes.txt && ln -s notes.txt .env`,
	}
	for _, prov := range []Backend{newBwrap(), newLandlock()} {
		for name, script := range attempts {
			t.Run(prov.Name()+"/"+name, func(t *testing.T) {
				f := newFixture(t, prov)
				env, keys := filepath.Join(f.ws, ".env"), filepath.Join(f.ws, "deploy", "keys")
				svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: f.ws, Home: f.home,
					StateDir: f.state, ConfigDir: filepath.Join(f.home, ".config", "cordon"), ExtraReadDeny: []string{env, keys}}}
				p, err := svc.Resolve(Request{TmpDir: f.tmp})
				require.NoError(t, err)
				out, o := f.launch(p, "/bin/sh", "-c", script)
				require.NoError(t, o.GuardErr)
				assert.NotEmpty(t, o.Undone, "nothing undone: %s", out)
				for _, entry := range []string{env, keys} {
					_, err := os.Lstat(entry)
					assert.ErrorIs(t, err, fs.ErrNotExist, "%s was made by the command and left", entry)
				}
				// The human fills the entries in place; the command's file
				// holds none of it.
				require.NoError(t, os.MkdirAll(keys, 0o755))
				require.NoError(t, os.WriteFile(env, []byte("ENV-CANARY\n"), 0o600))
				require.NoError(t, os.WriteFile(filepath.Join(keys, "id"), []byte("KEY-CANARY\n"), 0o600))
				if data, err := os.ReadFile(filepath.Join(f.ws, "notes.txt")); err == nil {
					assert.NotContains(t, string(data), "CANARY")
				}
			})
		}
	}
}
