package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/cordonhq/cordon/internal/pathx"
	"github.com/cordonhq/cordon/sandbox/internal/gitrepo"
)

// protectedList names every protected path as an absolute, lexically
// clean path: the protected names under each writable root but the
// session tmp, the git paths of every repository found, the read-deny
// entries in a root that do not exist yet, the directories of cordon's PATH that lie in a root, and cordon's own
// config and state directories.
func protectedList(p ExecutionPolicy, set Settings, repos []gitrepo.Repo, in *PolicyInputs) (list []string, floors map[string]string, guardOnly map[string]bool) {
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
				if kept := pathx.FileOnTheWay(root, filepath.Join(root, filepath.FromSlash(name))); kept != "" {
					add(kept)
				}
			}
		}
		// The protected names found deeper: a monorepo's pkg/.vscode is
		// loaded by the editor opened in pkg/. Pinned down to the
		// directory that holds them, not above, so that a package can
		// still be moved (what it carries to a new place is audited).
		// One that is a writable root itself, or holds one, was made
		// writable on purpose (a wrapped agent's own config directory).
		for _, n := range p.findings().named {
			if !slices.ContainsFunc(roots, func(r string) bool { return within(r, n.Path) }) {
				if kept := pathx.FileOnTheWay(n.Dir, n.Path); kept != "" {
					addFrom(n.Dir, kept)
				}
			}
		}
		// (No root holds the home, homerule.go: its start-up files need
		// no list here.) A read-deny entry in a root that does not exist
		// yet must not be made: a command could make it a hard link to a
		// file it reads (ln notes.txt .env), which the human would later
		// fill in place. One that exists is hidden.
		for _, d := range p.ReadDeny {
			if pathx.WithinAny(d, roots) && !pathx.ExistsNoFollow(d) {
				add(d)
			}
		}
		for _, r := range repos {
			floor := ""
			if r.Worktree != "" && !slices.Contains(roots, r.Worktree) {
				floor = r.Worktree
			}
			addFrom(floor, gitrepo.Protected(r, p.WritableRoots, set.Home, in)...)
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
		add(in.CanonicalOrClean(p.ConfigDir))
	}
	if p.StateDir != "" {
		add(in.CanonicalOrClean(p.StateDir))
	}
	return list, floors, guardOnly
}

// isSubmoduleGitDir reports whether gitdir lies in a repository's modules/.
func isSubmoduleGitDir(gitdir string, repos []gitrepo.Repo) bool {
	return gitdir != "" && slices.ContainsFunc(repos, func(r gitrepo.Repo) bool {
		return r.CommonDir != "" && within(gitdir, filepath.Join(r.CommonDir, "modules"))
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

// scratchDirs are the places commands write that nobody searches: the
// writable roots that are not the user's (the session tmp), and every
// session's tmp under the state directory, since a model that drives two
// sessions could link from one into the other's.
func scratchDirs(p ExecutionPolicy) []string {
	var dirs []string
	for _, r := range p.WritableRoots {
		if !slices.Contains(userRoots(p), r) {
			dirs = append(dirs, r)
		}
	}
	if p.StateDir != "" {
		tmps := filepath.Join(p.StateDir, sessionTmpDir)
		if c, err := filepath.EvalSymlinks(tmps); err == nil {
			tmps = c
		}
		dirs = append(dirs, tmps)
	}
	return dirs
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
		c := in.CanonicalOrClean(dir)
		for _, r := range roots {
			if within(c, r) && c != r {
				out = append(out, c)
				break
			}
		}
	}
	return out
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
		c := pathx.CanonicalOrClean(dir.path)
		for _, r := range userRoots(p) {
			if within(c, r) {
				return &UnavailableError{Reason: fmt.Sprintf(
					"the writable root %s contains cordon's %s directory %s, which %s cannot keep read-only beneath a writable parent: a command could change what the next cordon start trusts. Install bubblewrap (apt-get install bubblewrap), or choose a workspace that does not contain your home directory",
					r, dir.what, c, backend)}
			}
		}
	}
	return nil
}
