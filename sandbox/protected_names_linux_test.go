package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/cordonhq/cordon/sandbox/internal/gitrepo"
	"github.com/cordonhq/cordon/sandbox/internal/guard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plantEverywhere is a script that writes every protected name, as a
// file (or, with inside, a directory holding that file), at each of the
// directories given (relative to the workspace),
// making the directories on the way; each write may fail (a read-only
// bind), the script goes on.
func plantEverywhere(names, dirs []string, inside string) string {
	var b strings.Builder
	for _, dir := range dirs {
		for _, n := range names {
			p := filepath.Join(dir, filepath.FromSlash(n), inside)
			b.WriteString("mkdir -p '" + filepath.Dir(p) + "' 2>/dev/null; printf evil > '" + p + "' 2>/dev/null\n")
		}
	}
	b.WriteString("true\n")
	return b.String()
}

// TestProtectedNamesPlantedAtAnyDepth: every entry of the list, written
// by a command at the top of the workspace, one level down in a package
// that exists (pkg/.vscode/tasks.json's place), in a directory the command
// makes (new/), and three levels down (a/b/c), is refused or undone before
// the call returns, on both backends; what the host holds afterwards is
// the judge. An existing nested configuration (pkg/.claude/settings.json)
// cannot be changed either.
func TestProtectedNamesPlantedAtAnyDepth(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		for rel, content := range map[string]string{
			"pkg/main.go":               "package main\n",
			"pkg2/main.go":              "package main\n",
			"deep/a/b/main.go":          "package main\n",
			"app/.claude/settings.json": `{"permissions":{}}`,
			"app/.vscode/settings.json": `{}`,
			"app/.hg/store/placeholder": "",
		} {
			p := filepath.Join(f.ws, filepath.FromSlash(rel))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		}
		before := testenv.Snapshot(t, f.ws)
		p := f.policy(WorkspaceWrite, NetworkAllow)
		// Each name as a file here, as a directory holding tasks.json there.
		asFile, asDir := []string{".", "pkg", "new", "deep/a/b", "app"}, []string{"pkg2", "new2/x"}
		dirs := append(slices.Clone(asFile), asDir...)
		script := plantEverywhere(DefaultProtectedNames, asFile, "") +
			plantEverywhere(DefaultProtectedNames, asDir, "tasks.json") +
			`printf '{"hooks":1}' > app/.claude/settings.json; printf evil >> app/.vscode/settings.json; printf '[hooks]' > app/.hg/hgrc; true`
		out, o := f.launch(p, "/bin/sh", "-c", script)
		require.Equal(t, 0, o.ExitCode, out)
		// The writes happened inside, and were undone: the result says so.
		var undone []string
		for _, c := range o.Undone {
			undone = append(undone, c.Path)
		}
		for _, rel := range []string{"pkg/.envrc", "new/.mcp.json", "deep/a/b/.claude", "pkg2/.vscode", "new2/x/.vscode", "pkg2/.hg/hgrc", "app/.hg/hgrc"} {
			assert.Contains(t, undone, filepath.Join(f.ws, filepath.FromSlash(rel)))
		}
		for _, e := range ProtectedNameList {
			t.Run(e.Name, func(t *testing.T) {
				for _, dir := range dirs {
					p := filepath.Join(f.ws, dir, filepath.FromSlash(e.Name))
					if _, existed := before[p]; existed {
						continue // the human's: unchanged (below)
					}
					_, err := os.Lstat(p)
					assert.True(t, os.IsNotExist(err), "%s (%s) stayed on the host after the call", p, e.Tool)
				}
			})
		}
		// What existed is as it was; what the command made beside it is
		// gone or set aside (NAME.cordon-disarmed), never loaded again.
		after := testenv.Snapshot(t, f.ws)
		for path, desc := range before {
			if !strings.HasPrefix(desc, "d") { // a directory's size and links change with what it holds
				assert.Equal(t, desc, after[path], "%s changed", path)
			}
		}
		for path := range after {
			rel, err := filepath.Rel(f.ws, path)
			require.NoError(t, err)
			if _, ok := before[path]; ok {
				continue
			}
			if e, hit := protectedEntryOf(rel); hit {
				t.Errorf("%s is loaded by %s and was made by the command", rel, e)
			}
		}
	})
}

// protectedEntryOf reports whether a workspace-relative path is, or lies
// beneath, a protected name (by its components, as the tools find it).
func protectedEntryOf(rel string) (string, bool) {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for _, e := range ProtectedNameList {
		np := strings.Split(e.Name, "/")
		for i := 0; i+len(np) <= len(parts); i++ {
			if strings.Join(parts[i:i+len(np)], "/") == e.Name {
				return e.Tool, true
			}
		}
	}
	return "", false
}

// guardSetFor is the guard set a launch would take for root: the
// repositories and protected names the policy's search found.
func guardSetFor(t *testing.T, root string) guard.Set {
	t.Helper()
	found, err := gitrepo.FindWithNames([]string{root}, DefaultProtectedNames, nil)
	require.NoError(t, err)
	set := guard.Set{Root: root, Repos: guard.RepoIDs(found.Repos), Incomplete: found.Incomplete, Whole: found.Whole, Names: DefaultProtectedNames}
	for _, n := range found.Named {
		set.Named = append(set.Named, n.Path)
	}
	return set
}

// TestProtectedNameThatIsAWritableRoot: a protected name made a writable
// root on purpose (a wrapped agent's own config directory beneath its
// class directory) stays writable: neither bound read-only nor set aside.
// A protected name beside it is not.
func TestProtectedNameThatIsAWritableRoot(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		own := filepath.Join(f.ws, "agent", ".claude")
		require.NoError(t, os.MkdirAll(own, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(own, "settings.json"), []byte("{}"), 0o644))
		svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Network: NetworkAllow, Workspace: f.ws, Home: f.home,
			StateDir: f.state, ConfigDir: filepath.Join(f.home, ".config", "cordon"), ExtraWriteAllow: []string{own}}}
		p, err := svc.Resolve(Request{TmpDir: f.tmp, SessionID: "test"})
		require.NoError(t, err)
		assert.NotContains(t, p.Protected, own)
		out, o := f.launch(p, "/bin/sh", "-c", `printf '{"theme":"dark"}' > agent/.claude/settings.json && mkdir agent/.claude/projects && mkdir agent/.codex && printf x > agent/.codex/config.toml`)
		require.Equal(t, 0, o.ExitCode, out)
		b, err := os.ReadFile(filepath.Join(own, "settings.json"))
		require.NoError(t, err)
		assert.Equal(t, `{"theme":"dark"}`, string(b))
		assert.DirExists(t, filepath.Join(own, "projects"))
		assert.NoDirExists(t, filepath.Join(f.ws, "agent", ".codex"), "a protected name beside it is set aside")
	})
}

// TestPackageMovedWithItsConfig: a package can still be moved (its
// protected names pin nothing above the package), and what it carries to
// the new place is set aside there: no tool loads it from where the
// command put it.
func TestPackageMovedWithItsConfig(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		tasks := filepath.Join(f.ws, "pkg", ".vscode", "tasks.json")
		require.NoError(t, os.MkdirAll(filepath.Dir(tasks), 0o755))
		require.NoError(t, os.WriteFile(tasks, []byte("{}"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(f.ws, "pkg", "main.go"), []byte("package main\n"), 0o644))
		out, o := f.launch(f.policy(WorkspaceWrite, NetworkAllow), "/bin/sh", "-c", `mv pkg moved && cat moved/main.go`)
		require.Equal(t, 0, o.ExitCode, out)
		assert.FileExists(t, filepath.Join(f.ws, "moved", "main.go"))
		assert.NoDirExists(t, filepath.Join(f.ws, "moved", ".vscode"))
		assert.FileExists(t, filepath.Join(f.ws, "moved", ".vscode"+guard.DisarmedSuffix, "tasks.json"), "set aside, not deleted")
	})
}

// TestFloodDoesNotUnprotect: a command that floods the workspace with
// directories (here past a bound of 20; 10,000 in the product) must not
// push the human's existing nested configuration and repositories out of
// the next call's protection: the policy searches past its bound, and the
// next command's writes to them do not stay, on both backends.
func TestFloodDoesNotUnprotect(t *testing.T) {
	defer func(old int) { gitrepo.ScanMaxDirs = old }(gitrepo.ScanMaxDirs)
	gitrepo.ScanMaxDirs = 20
	for _, prov := range []Backend{newBwrap(), newLandlock()} {
		t.Run(prov.Name(), func(t *testing.T) {
			f := newFixture(t, prov)
			settings := filepath.Join(f.ws, "zzz", "pkg", ".claude", "settings.json")
			require.NoError(t, os.MkdirAll(filepath.Dir(settings), 0o755))
			require.NoError(t, os.WriteFile(settings, []byte("{}\n"), 0o644))
			repo := filepath.Join(f.ws, "zzz", "lib")
			require.NoError(t, os.MkdirAll(repo, 0o755))
			gitOnHost(t, repo, "init", "-q")
			config, err := os.ReadFile(filepath.Join(repo, ".git", "config"))
			require.NoError(t, err)
			for i := range 30 { // the flood an earlier command left, searched before zzz
				require.NoError(t, os.Mkdir(filepath.Join(f.ws, fmt.Sprintf("a%02d", i)), 0o755))
			}

			p := f.policy(WorkspaceWrite, NetworkDeny)
			assert.False(t, p.RepoScanIncomplete, "the search went past its bound")
			assert.Contains(t, p.Protected, filepath.Dir(settings))
			assert.Contains(t, p.Protected, filepath.Join(repo, ".git", "config"))
			out, _ := f.run(p, "bash", "-c", `echo '{"hooks":1}' > zzz/pkg/.claude/settings.json; git -C zzz/lib config core.fsmonitor evil; echo ran`)
			assert.Contains(t, out, "ran")
			for path, want := range map[string]string{settings: "{}\n", filepath.Join(repo, ".git", "config"): string(config)} {
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, want, string(got), "%s on the host after the call", path)
			}
		})
	}
}

// TestFloodPastTheWholeSearchFailsClosed: a tree with more directories
// than even the whole search lists (a million in the product, 40 here)
// could hide what a command arms: no sandbox is built for it, on either
// backend, and nothing runs.
func TestFloodPastTheWholeSearchFailsClosed(t *testing.T) {
	defer func(scan, audit int) { gitrepo.ScanMaxDirs, gitrepo.MaxDirs = scan, audit }(gitrepo.ScanMaxDirs, gitrepo.MaxDirs)
	gitrepo.ScanMaxDirs, gitrepo.MaxDirs = 20, 40
	for _, prov := range []Backend{newBwrap(), newLandlock()} {
		t.Run(prov.Name(), func(t *testing.T) {
			f := newFixture(t, prov)
			for i := range 60 {
				require.NoError(t, os.Mkdir(filepath.Join(f.ws, fmt.Sprintf("a%02d", i)), 0o755))
			}
			p := f.policy(WorkspaceWrite, NetworkDeny)
			require.True(t, p.RepoScanIncomplete)
			cp, err := p.ToConfined()
			if err == nil {
				_, err = prov.Confine([]string{"touch", filepath.Join(f.ws, "ran")}, cp)
			}
			require.ErrorIs(t, err, gitrepo.ErrTooLarge)
			assert.Contains(t, err.Error(), "run cordon on a smaller workspace")
			assert.NoFileExists(t, filepath.Join(f.ws, "ran"))
			ro := f.policy(ReadOnly, NetworkDeny)
			out, code := f.run(ro, "true")
			assert.Equal(t, 0, code, "read-only needs no search: %s", out)
		})
	}
}

// TestFileOnTheWayToAProtectedName: Jujutsu finds a workspace's
// repository, and its config.toml (which can name programs to run),
// through .jj/repo, a file naming the place when the workspace is not the
// repository's first. A command must neither repoint the human's such
// files nor leave one of its own, on either backend; the human's stay.
func TestFileOnTheWayToAProtectedName(t *testing.T) {
	for _, prov := range []Backend{newBwrap(), newLandlock()} {
		t.Run(prov.Name(), func(t *testing.T) {
			f := newFixture(t, prov)
			human := []string{filepath.Join(f.ws, ".jj", "repo"), filepath.Join(f.ws, "pkg", ".jj", "repo")}
			for _, p := range human {
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte("/home/h/src/main/.jj/repo\n"), 0o644))
			}
			p := f.policy(WorkspaceWrite, NetworkDeny)
			out, _ := f.run(p, "bash", "-c", `for d in . pkg new; do mkdir -p $d/.jj; echo /tmp/evil > $d/.jj/repo; done; echo ran`)
			assert.Contains(t, out, "ran")
			for _, p := range human {
				got, err := os.ReadFile(p)
				require.NoError(t, err, "the human's %s stays", p)
				assert.Equal(t, "/home/h/src/main/.jj/repo\n", string(got), "%s on the host after the call", p)
			}
			_, err := os.Lstat(filepath.Join(f.ws, "new", ".jj", "repo"))
			assert.ErrorIs(t, err, os.ErrNotExist, "the command's own .jj/repo is set aside")
		})
	}
}

// TestFileInPlaceOfADirectoryOnTheWay: in the human's first jj workspace
// .jj/repo is the repository, a directory holding config.toml; a command
// that moves it away (with a planted config.toml) and leaves a .jj/repo
// file naming the new place must not have it stay, on either backend.
func TestFileInPlaceOfADirectoryOnTheWay(t *testing.T) {
	for _, prov := range []Backend{newBwrap(), newLandlock()} {
		t.Run(prov.Name(), func(t *testing.T) {
			f := newFixture(t, prov)
			config := filepath.Join(f.ws, ".jj", "repo", "config.toml")
			require.NoError(t, os.MkdirAll(filepath.Dir(config), 0o755))
			require.NoError(t, os.WriteFile(config, []byte("[user]\nname = \"h\"\n"), 0o644))
			p := f.policy(WorkspaceWrite, NetworkDeny)
			out, _ := f.run(p, "bash", "-c", `mv .jj/repo .jj/repo.x && printf '[ui]\npager = ["sh", "-c", "touch /tmp/ran"]\n' > .jj/repo.x/config.toml && printf "$PWD/.jj/repo.x" > .jj/repo; echo ran`)
			assert.Contains(t, out, "ran")
			fi, err := os.Lstat(filepath.Join(f.ws, ".jj", "repo"))
			if err == nil {
				assert.True(t, fi.IsDir(), ".jj/repo on the host is no file naming elsewhere")
			}
		})
	}
}

// TestAKernelConfigStaysWritable: a file named as the first component of
// a protected name (a kernel tree's .config, not ~/.config) is neither
// kept read-only nor set aside, at the top or deeper, made or edited.
func TestAKernelConfigStaysWritable(t *testing.T) {
	for _, prov := range []Backend{newBwrap(), newLandlock()} {
		t.Run(prov.Name(), func(t *testing.T) {
			f := newFixture(t, prov)
			linux := filepath.Join(f.ws, "src", "linux")
			require.NoError(t, os.MkdirAll(linux, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(f.ws, ".config"), []byte("CONFIG_A=y\n"), 0o644))
			p := f.policy(WorkspaceWrite, NetworkDeny)
			out, code := f.run(p, "bash", "-c", `set -e; echo CONFIG_B=y >> .config; cd src/linux; echo CONFIG_C=y > .config.tmp; mv .config.tmp .config; echo done`)
			require.Equal(t, 0, code, out)
			for path, want := range map[string]string{filepath.Join(f.ws, ".config"): "CONFIG_A=y\nCONFIG_B=y\n", filepath.Join(linux, ".config"): "CONFIG_C=y\n"} {
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, want, string(got), path)
			}
		})
	}
}
