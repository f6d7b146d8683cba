package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultProtectedNames are the paths, relative to each writable root, that
// stay read-only even in workspace-write: files that name programs which a
// human (or the next cordon) will later run or trust outside the sandbox.
// Git's own paths are not listed: they come from the repositories actually
// found (gitrepos.go), read as git reads them.
var DefaultProtectedNames = []string{
	// cordon's own configuration of a workspace.
	".cordon", "cordon.toml",
	// Shell start-up files.
	".bashrc", ".bash_aliases", ".bashrc.d", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zshrc.d", ".zprofile", ".zshenv", ".zlogin", ".zlogout",
	// The per-user configuration of git and systemd, where a root holds it.
	".gitconfig", ".config/git", ".config/systemd",
	// Editor and agent configuration that names programs to run.
	".vscode", ".idea", ".mcp.json", ".claude", ".cursor", ".codex", ".gemini",
	".envrc", ".ripgreprc", ".devcontainer", ".pre-commit-config.yaml",
}

// protectedList names every protected path as an absolute, lexically
// clean path: the protected names under each writable root but the
// session tmp, the git paths of every repository found, the read-deny
// entries in a root that do not exist yet, the directories of cordon's PATH that lie in a root, and cordon's own
// config and state directories.
func protectedList(p ExecutionPolicy, set Settings, repos []GitRepo, in *PolicyInputs) (list []string, floors map[string]string, guardOnly map[string]bool) {
	addFrom := func(floor string, paths ...string) {
		for _, path := range paths {
			if path == "" {
				continue
			}
			if path = filepath.Clean(path); !slices.Contains(list, path) {
				list = append(list, path)
				if floor != "" {
					if floors == nil {
						floors = map[string]string{}
					}
					floors[path] = floor
				}
			}
		}
	}
	add := func(paths ...string) { addFrom("", paths...) }
	if p.Mode == WorkspaceWrite {
		roots := userRoots(p)
		for _, root := range roots {
			for _, name := range p.ProtectedNames {
				add(filepath.Join(root, filepath.FromSlash(name)))
			}
		}
		// (No root holds the home, homerule.go: its start-up files need
		// no list here.) A read-deny entry in a root that does not exist
		// yet must not be made: a command could make it a hard link to a
		// file it reads (ln notes.txt .env), which the human would later
		// fill in place. One that exists is hidden.
		for _, d := range p.ReadDeny {
			if withinAny(d, roots) && !existsNoFollow(d) {
				add(d)
			}
		}
		for _, r := range repos {
			floor := ""
			if r.Worktree != "" && !slices.Contains(roots, r.Worktree) {
				floor = r.Worktree
			}
			addFrom(floor, repoProtected(r, p.WritableRoots, set.Home, in)...)
			// `git submodule update` rewrites a submodule's config with
			// what it already says (core.worktree): a read-only bind would
			// break it, so that one file is guarded on every backend.
			if isSubmoduleGitDir(r.GitDir, repos) {
				if guardOnly == nil {
					guardOnly = map[string]bool{}
				}
				guardOnly[filepath.Join(r.GitDir, "config")] = true
			}
		}
		add(pathDirsIn(roots, in)...)
	}
	if p.ConfigDir != "" {
		add(in.canonicalOrClean(p.ConfigDir))
	}
	if p.StateDir != "" {
		add(in.canonicalOrClean(p.StateDir))
	}
	return list, floors, guardOnly
}

// isSubmoduleGitDir reports whether gitdir lies in a repository's modules/.
func isSubmoduleGitDir(gitdir string, repos []GitRepo) bool {
	return gitdir != "" && slices.ContainsFunc(repos, func(r GitRepo) bool {
		return r.CommonDir != "" && Within(gitdir, filepath.Join(r.CommonDir, "modules"))
	})
}

// userRoots are the writable roots a command's files land in: all of them
// but the session tmp, which is cordon's and gone with the session.
func userRoots(p ExecutionPolicy) []string {
	var roots []string
	for _, r := range p.WritableRoots {
		if r != p.TmpDir {
			roots = append(roots, r)
		}
	}
	return roots
}

// pathDirsIn returns the directories of cordon's own PATH that lie inside a
// writable root (but are not a root themselves): the human's shell most
// likely has the same PATH, so a program planted there would run in place
// of git, ls or a tool a git config names.
func pathDirsIn(roots []string, in *PolicyInputs) []string {
	var out []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(dir) {
			continue
		}
		c := in.canonicalOrClean(dir)
		for _, r := range roots {
			if Within(c, r) && c != r {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// withinAny reports whether path lies in one of roots.
func withinAny(path string, roots []string) bool {
	return slices.ContainsFunc(roots, func(r string) bool { return Within(path, r) })
}

// expandUserPath turns "~/x" into HOME/x, the way git reads paths.
func expandUserPath(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return ExpandHome(p, home)
	}
	return p
}

// controlPlaneOutside refuses a policy whose writable roots contain
// cordon's config or state directory, for a backend that cannot keep a
// path read-only beneath a writable parent: a confined command could
// otherwise rewrite the config the next start trusts, forge session logs
// or read the HTTP token.
func controlPlaneOutside(p ExecutionPolicy, backend string) error {
	for _, dir := range []struct{ what, path string }{{"config", p.ConfigDir}, {"state", p.StateDir}} {
		if dir.path == "" {
			continue
		}
		c := canonicalOrClean(dir.path)
		for _, r := range userRoots(p) {
			if Within(c, r) {
				return &UnavailableError{Reason: fmt.Sprintf(
					"the writable root %s contains cordon's %s directory %s, which %s cannot keep read-only beneath a writable parent: a command could change what the next cordon start trusts. Install bubblewrap (apt-get install bubblewrap), or choose a workspace that does not contain your home directory",
					r, dir.what, c, backend)}
			}
		}
	}
	return nil
}
