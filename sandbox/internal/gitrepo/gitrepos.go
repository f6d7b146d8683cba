package gitrepo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cordonhq/cordon/internal/filestamp"
	"github.com/cordonhq/cordon/internal/ownerwrite"
	"github.com/cordonhq/cordon/internal/pathx"
)

// Repo is a git repository found beneath a writable root. Git runs code
// from its gitdir (hooks, config) when the human runs git there later,
// outside any sandbox, so those paths are protected.
type Repo struct {
	// Worktree is the directory whose .git names GitDir, or "" for a gitdir
	// found on its own (a submodule's, under .git/modules).
	Worktree string
	// GitDir is the repository's gitdir and CommonDir the directory git
	// takes hooks and config from (GitDir, unless a linked worktree).
	GitDir, CommonDir string
	// DotGitFile is set when Worktree/.git is a "gitdir:" pointer file:
	// rewriting it would point git at another gitdir.
	DotGitFile bool
}

const (
	// repoScanDepth is how many directory levels below a writable root
	// are searched for nested repositories (SPEC §1: at least 3).
	repoScanDepth = 4
	// moduleScanDepth bounds the levels of submodule names (which may
	// contain slashes) searched under a gitdir's modules/.
	moduleScanDepth = 4
)

// Bounds of the search; variables so that tests can reach them cheaply.
var (
	// ScanMaxDirs bounds the directories searched per root, so a
	// huge tree cannot make every call slow; what lies beyond is named in
	// the policy (RepoScanIncomplete) and in `cordon status`.
	ScanMaxDirs = 10000
	// MaxDirs bounds, apart, the directories the audit searches that
	// changed since its baseline. They do not count against
	// ScanMaxDirs: else a command could make ten thousand directories
	// to push a repository it made beyond the search.
	MaxDirs = 1_000_000
)

// repoScanSkip are directories never searched: package trees that nobody
// commits in, and which hold more directories than everything else.
var repoScanSkip = []string{"node_modules"}

// ErrTooLarge: the search for repositories and protected names
// stopped even past its usual bound, so a command could arm what it did
// not see.
var ErrTooLarge = errors.New("workspace too large to guard")

// ErrSymlink is returned when a .git found in a writable root is a
// symlink: cordon would have to follow it to protect the hooks behind it.
var ErrSymlink = errors.New("a .git that is a symlink")

// Find searches each root for repositories: the root's own, nested
// ones down to repoScanDepth levels, and the submodule gitdirs of each.
// It reports whether the search stopped early at ScanMaxDirs, and
// ErrSymlink for a .git that is a symlink (after searching everything
// else).
func Find(roots []string, in *pathx.Inputs) (repos []Repo, incomplete bool, err error) {
	found := Search(roots, nil, in, Bounds{})
	return found.Repos, found.Incomplete, found.symlinkErr()
}

// FindWithNames is the policy's search: Find, which also finds
// the protected names at any depth the search reaches (named): for each
// directory it lists, the names whose first component it holds. One
// search serves both, so the names cost a lookup per directory entry and
// nothing else. Where the bounded search stops at ScanMaxDirs (a huge
// tree, or one an earlier command flooded with directories to push your
// nested .claude/ or repository out of its reach), it searches again
// without that bound, up to MaxDirs, as the guard does (whole); and
// incomplete says that even that search stopped.
func FindWithNames(roots, names []string, in *pathx.Inputs) (found Found, err error) {
	found = Search(roots, names, in, Bounds{})
	if found.Incomplete {
		found = Search(roots, names, in, Bounds{Whole: true})
		found.Whole = true
	}
	return found, found.symlinkErr()
}

// symlinkErr is ErrSymlink for the first .git symlink the search met.
func (found Found) symlinkErr() error {
	if len(found.Symlinks) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s; replace it with the directory it points to, or with a \"gitdir:\" file", ErrSymlink, found.Symlinks[0])
}

// Found is what Search found.
type Found struct {
	Repos      []Repo
	Incomplete bool
	// Whole: the search went past ScanMaxDirs (FindWithNames).
	Whole bool
	// Symlinks are the .git entries that are symlinks: git would follow
	// them, cordon does not.
	Symlinks []string
	// IntoScratch are the symlinks met that lead into a scratch
	// directory (the session tmp): writable by the command and searched by
	// nobody, so whatever the human's tools find through such a link
	// (a repository's config, a .vscode) is the command's.
	IntoScratch []string
	// Named are the protected names met in the directories listed: each
	// directory joined with every name whose first component it holds
	// (the rest of the name may not exist).
	Named []NamedPath
}

// NamedPath is a protected name met beneath a writable root: Path is Dir
// joined with the name.
type NamedPath struct{ Dir, Name, Path string }

// Bounds say how far Search goes.
type Bounds struct {
	// Since, when set (the audit), is the baseline's time: a directory
	// changed since then (made, or given or losing an entry: its ctime)
	// does not count against ScanMaxDirs, and one that did not change
	// is skipped past it.
	Since time.Time
	// LookSince, when before Since, widens which directories beyond
	// the depth are listed to those changed since then (what is taken
	// from them is still only what changed since since).
	LookSince time.Time
	// Whole: unchanged directories count against MaxDirs, not
	// ScanMaxDirs (a root whose bounded search stopped).
	Whole bool
	// Scratch are the writable directories outside the roots (session
	// tmps): a symlink that leads into one is reported (intoScratch), not
	// followed.
	Scratch []string
}

// Search is Find, which the audit also uses: a .git symlink that
// a command made must not hide the repositories it made beside it.
func Search(roots, names []string, in *pathx.Inputs, bounds Bounds) (found Found) {
	changedSince, scratch := bounds.Since, bounds.Scratch
	unchangedMax := ScanMaxDirs
	if bounds.Whole {
		unchangedMax = MaxDirs
	}
	byFirst := namesByFirstComponent(names)
	seen := map[string]bool{}
	addRepo := func(r Repo) {
		key := r.Worktree + "\x00" + r.GitDir
		if !seen[key] {
			seen[key] = true
			found.Repos = append(found.Repos, r)
		}
	}
	// The audit after a command (not the baseline's whole search) lists,
	// beyond repoScanDepth, the directories that changed during the
	// command, and takes from them only the repositories and names made
	// or moved there since: a command's fresh deep tree is searched, a
	// human's deep configuration is left as the bound says.
	auditing := changedSince.After(Everything)
	lookFurther := bounds.LookSince.After(Everything) && bounds.LookSince.Before(changedSince)
	for _, root := range roots {
		type item struct {
			dir   string
			depth int
		}
		queue := []item{{root, 0}}
		scanned, changed := 0, 0
		// visited: a directory is searched once, at the least depth it is
		// met (a symlink can present a deep one near the top).
		visited := map[string]bool{}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			if visited[cur.dir] {
				continue
			}
			visited[cur.dir] = true
			if !changedSince.IsZero() && changedAfter(cur.dir, changedSince) {
				if changed++; changed > MaxDirs {
					found.Incomplete = true
					break
				}
			} else if scanned++; scanned > unchangedMax {
				found.Incomplete = true
				if changedSince.IsZero() {
					break
				}
				continue // the audit goes on with what changed
			}
			in.NoteTree(cur.dir)
			var entries []fs.DirEntry
			listed := false
			beyond := cur.depth >= repoScanDepth
			if !beyond || auditing && (changedAfter(cur.dir, changedSince) || lookFurther && changedAfter(cur.dir, bounds.LookSince)) {
				var lerr error
				entries, lerr = os.ReadDir(cur.dir)
				if errors.Is(lerr, fs.ErrPermission) && !changedSince.IsZero() {
					// The audit: a command (as the user) may have taken
					// read access away (chmod 111) from a directory that
					// git still passes through.
					lerr = ownerwrite.WithOwnerWrite(root, cur.dir, func() (err error) {
						entries, err = os.ReadDir(cur.dir)
						return err
					})
				}
				listed = lerr == nil // unreadable: looked at for its .git only
			}
			// A listing says whether there is a .git to look at: most
			// directories have none, and a search is mostly system calls.
			// A directory that holds what a gitdir holds is one: git takes
			// it for a bare repository when it finds no .git on its way up
			// (and core.worktree gives it a work tree anywhere).
			if cur.depth > repoScanDepth && !listed {
				continue // met only through a changed directory beyond the bound
			}
			// Beyond the bound, only what the command made or moved there.
			fresh := func(name string) bool { return !beyond || changedAfter(filepath.Join(cur.dir, name), changedSince) }
			if listed && looksLikeGitDir(entries) && fresh("HEAD") || !listed && holdsGitDir(cur.dir) {
				g := in.CanonicalOrClean(cur.dir)
				addRepo(Repo{GitDir: g, CommonDir: commonDirOf(g, in)})
			}
			if !listed || slices.ContainsFunc(entries, isDotGit) && fresh(".git") {
				r, ok, err := repoAt(cur.dir, in)
				switch {
				case errors.Is(err, ErrSymlink):
					found.Symlinks = append(found.Symlinks, filepath.Join(cur.dir, ".git"))
				case ok:
					addRepo(r)
				}
			}
			for _, e := range entries {
				for _, rest := range namesStartingWith(byFirst, e.Name()) {
					if fresh(e.Name()) {
						found.Named = append(found.Named, NamedPath{cur.dir, path.Join(e.Name(), rest), filepath.Join(cur.dir, e.Name(), filepath.FromSlash(rest))})
					}
				}
			}
			for _, e := range entries {
				if e.Name() == ".git" || slices.Contains(repoScanSkip, e.Name()) {
					continue
				}
				switch {
				case e.IsDir():
					queue = append(queue, item{filepath.Join(cur.dir, e.Name()), cur.depth + 1})
				case e.Type()&fs.ModeSymlink != 0:
					// A symlink to a directory inside a writable root
					// presents that directory here (link/.claude is
					// loaded by the tool opened in link/): it is searched
					// at the symlink's depth, by its own path. One that
					// leads out of the roots is not followed.
					link := filepath.Join(cur.dir, e.Name())
					if dir, ok := linkedDir(link, roots); ok {
						queue = append(queue, item{dir, cur.depth + 1})
					} else if len(scratch) > 0 && fresh(e.Name()) && leadsInto(link, scratch) {
						found.IntoScratch = append(found.IntoScratch, link)
					}
				}
			}
		}
	}
	// Each repository's submodule gitdirs, and the repositories its
	// gitlinks name at any depth; theirs in turn. Where git could not
	// list a repository's gitlinks, every .git at any depth may be one.
	addAt := func(dir string) {
		r, ok, err := repoAt(dir, in)
		switch {
		case errors.Is(err, ErrSymlink):
			if p := filepath.Join(dir, ".git"); !slices.Contains(found.Symlinks, p) {
				found.Symlinks = append(found.Symlinks, p)
			}
		case ok:
			addRepo(r)
		}
	}
	everywhere := false
	for i := 0; i < len(found.Repos); i++ {
		r := found.Repos[i]
		if r.Worktree != "" || r.GitDir == r.CommonDir {
			for _, m := range submoduleGitDirs(r.CommonDir, in) {
				addRepo(Repo{GitDir: m, CommonDir: m})
			}
		}
		if everywhere {
			continue
		}
		dirs, known := gitlinkDirs(r, in)
		for _, dir := range dirs {
			if pathx.WithinAny(in.CanonicalOrClean(dir), roots) { // else not writable: nothing planted there
				addAt(dir)
			}
		}
		if !known {
			everywhere = true
			if !walkEveryDotGit(roots, addAt) {
				found.Incomplete = true
			}
		}
	}
	return found
}

// linkedDir resolves a symlink met in the search: the directory it leads
// to, when that lies within one of roots.
func linkedDir(link string, roots []string) (string, bool) {
	dir, err := filepath.EvalSymlinks(link)
	if err != nil || !pathx.WithinAny(dir, roots) {
		return "", false
	}
	fi, err := os.Stat(dir)
	return dir, err == nil && fi.IsDir()
}

// leadsInto reports whether link resolves to a path within one of dirs,
// or would once its target exists: a dangling link into the session tmp
// is filled by the next command.
func leadsInto(link string, dirs []string) bool {
	target, err := os.Readlink(link)
	if err != nil {
		return false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(link), target)
	}
	// Resolve the part of the target that exists (it may pass through
	// other links), and keep the rest as written.
	existing, rest := filepath.Clean(target), ""
	for {
		if resolved, err := filepath.EvalSymlinks(existing); err == nil {
			return pathx.WithinAny(filepath.Join(resolved, rest), dirs)
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return pathx.WithinAny(filepath.Clean(target), dirs)
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
}

// walkEveryDotGit calls fn for every directory beneath roots, at any depth
// and in node_modules too, that holds a .git; it reports false when it
// stopped at MaxDirs.
func walkEveryDotGit(roots []string, fn func(dir string)) bool {
	seen := 0
	for _, root := range roots {
		queue := []string{root}
		for len(queue) > 0 {
			dir := queue[0]
			queue = queue[1:]
			if seen++; seen > MaxDirs {
				return false
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range entries {
				switch {
				case e.Name() == ".git":
					fn(dir)
				case e.IsDir(): // not a symlink: never followed
					queue = append(queue, filepath.Join(dir, e.Name()))
				}
			}
		}
	}
	return true
}

// namesByFirstComponent maps the first component of each protected name,
// lower-cased (a case-insensitive file system finds .VSCode for .vscode),
// to the rest of the names it begins ("" for a one-component name).
func namesByFirstComponent(names []string) map[string][]string {
	if len(names) == 0 {
		return nil
	}
	m := map[string][]string{}
	for _, n := range names {
		first, rest, _ := strings.Cut(n, "/")
		if k := strings.ToLower(first); !slices.Contains(m[k], rest) {
			m[k] = append(m[k], rest)
		}
	}
	return m
}

// namesStartingWith looks a directory entry up in namesByFirstComponent's
// map, lower-casing only a name that has upper case in it: the search
// looks up every entry of every directory it lists.
func namesStartingWith(byFirst map[string][]string, name string) []string {
	if len(byFirst) == 0 {
		return nil
	}
	if rest, ok := byFirst[name]; ok {
		return rest
	}
	if strings.ToLower(name) != name {
		return byFirst[strings.ToLower(name)]
	}
	return nil
}

func isDotGit(e fs.DirEntry) bool { return e.Name() == ".git" }

// holdsGitDir is looksLikeGitDir for a directory that is not listed (at
// the depth limit, or unreadable): by name.
func holdsGitDir(dir string) bool {
	has := func(name string) bool { _, err := os.Lstat(filepath.Join(dir, name)); return err == nil }
	return has("HEAD") && (has("commondir") || has("objects") && has("refs"))
}

// looksLikeGitDir reports whether a directory's entries make it a gitdir
// to git's discovery (is_git_directory): a HEAD, and objects and refs of
// its own or a commondir to take them from. A HEAD that git would not
// accept counts as well: cordon errs toward protecting.
func looksLikeGitDir(entries []fs.DirEntry) bool {
	has := func(name string) bool {
		return slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == name })
	}
	return has("HEAD") && (has("commondir") || has("objects") && has("refs"))
}

// changedAfter reports whether dir changed at or after since, within the
// clock's granularity; a directory that cannot be looked at, or whose
// change time is not known, counts as changed.
func changedAfter(dir string, since time.Time) bool {
	fi, err := os.Lstat(dir)
	if err != nil {
		return true
	}
	ct, ok := filestamp.ChangeTime(fi)
	return !ok || !ct.Before(since.Add(-ChangeTimeSlack))
}

// Everything is a changedSince before any change: a search with it goes
// through the whole root (up to MaxDirs).
var Everything = time.Unix(1, 0)

// ChangeTimeSlack covers file systems whose timestamps lag the clock by
// up to a tick, and a clock that steps back a little.
const ChangeTimeSlack = 2 * time.Second

// repoAt returns the repository whose .git lies in dir, if any.
func repoAt(dir string, in *pathx.Inputs) (Repo, bool, error) {
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return Repo{}, false, nil
	case fi.Mode()&fs.ModeSymlink != 0:
		return Repo{}, false, ErrSymlink
	case fi.IsDir():
		g := in.CanonicalOrClean(dotgit)
		return Repo{Worktree: dir, GitDir: g, CommonDir: commonDirOf(g, in)}, true, nil
	case fi.Mode().IsRegular():
		r := Repo{Worktree: dir, DotGitFile: true}
		if target, ok := gitPointer(dotgit, "gitdir:", in); ok {
			if g, err := in.Canonical(relativeTo(dir, target)); err == nil {
				if st, err := os.Stat(g); err == nil && st.IsDir() {
					r.GitDir, r.CommonDir = g, commonDirOf(g, in)
				}
			}
		}
		return r, true, nil
	}
	return Repo{}, false, nil
}

// commonDirOf reads a gitdir's "commondir" pointer as git does.
func commonDirOf(gitdir string, in *pathx.Inputs) string {
	if common, ok := gitPointer(filepath.Join(gitdir, "commondir"), "", in); ok {
		if c, err := in.Canonical(relativeTo(gitdir, common)); err == nil {
			return c
		}
	}
	return gitdir
}

// submoduleGitDirs returns the gitdirs under gitdir/modules: a directory
// holding a HEAD file is one, and may hold modules of its own.
func submoduleGitDirs(gitdir string, in *pathx.Inputs) []string {
	var out []string
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		in.NoteTree(dir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			sub := filepath.Join(dir, e.Name())
			head := filepath.Join(sub, "HEAD")
			in.NotePath(head)
			// git also takes a HEAD that is a symlink (to refs/…).
			if fi, err := os.Lstat(head); err == nil && (fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0) {
				out = append(out, sub)
				walk(filepath.Join(sub, "modules"), 1)
			} else if depth < moduleScanDepth {
				walk(sub, depth+1) // a name with slashes: modules/a/b
			}
		}
	}
	walk(filepath.Join(gitdir, "modules"), 1)
	return out
}

// Protected lists the paths of one repository that git reads code or
// configuration from, keeping those inside the writable roots (the rest
// is read-only already): hooks, config, config.worktree, commondir, the
// pointers of its linked worktrees, .gitmodules and a .git pointer file,
// and whatever its configuration names (gitconfig.go).
func Protected(r Repo, roots []string, home string, in *pathx.Inputs) []string {
	var paths []string
	if r.Worktree != "" {
		paths = append(paths, filepath.Join(r.Worktree, ".gitmodules"))
		if r.DotGitFile {
			paths = append(paths, filepath.Join(r.Worktree, ".git"))
		}
		// A submodule that .gitmodules declares but nobody initialised:
		// its gitdir does not exist yet, and `git submodule update --init`
		// would adopt one a command made there, hooks and all.
		if r.CommonDir != "" {
			for _, name := range declaredSubmodules(filepath.Join(r.Worktree, ".gitmodules"), in) {
				if gd := filepath.Join(r.CommonDir, "modules", filepath.FromSlash(name)); !pathx.ExistsNoFollow(gd) {
					paths = append(paths, gd)
				}
			}
		}
	}
	if r.GitDir != "" {
		for _, dir := range []string{r.GitDir, r.CommonDir} {
			paths = append(paths,
				filepath.Join(dir, "hooks"), filepath.Join(dir, "config"),
				filepath.Join(dir, "config.worktree"), filepath.Join(dir, "commondir"))
		}
		// Every linked worktree of the repository takes its commondir and
		// worktree config from here: repointing one would hand another
		// worktree planted hooks.
		if entries, err := os.ReadDir(filepath.Join(r.CommonDir, "worktrees")); err == nil {
			in.NoteTree(filepath.Join(r.CommonDir, "worktrees"))
			for _, e := range entries {
				wt := filepath.Join(r.CommonDir, "worktrees", e.Name())
				paths = append(paths, filepath.Join(wt, "commondir"), filepath.Join(wt, "config.worktree"), filepath.Join(wt, "gitdir"))
			}
		}
		paths = append(paths, gitConfigPaths(r, home, in)...)
	}
	var out []string
	for _, p := range paths {
		if pathx.WithinAny(p, roots) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// declaredSubmodules returns the submodule names a .gitmodules declares,
// read by git: `submodule.NAME.path` keys.
func declaredSubmodules(file string, in *pathx.Inputs) []string {
	in.NoteContent(file)
	if fi, err := os.Lstat(file); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil
	}
	out, err := ConfigFile(gitPath, file, "--name-only", "--get-regexp", `^submodule\..*\.path$`)
	if err != nil {
		return nil
	}
	var names []string
	for _, key := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, ok := strings.CutPrefix(key, "submodule."); ok {
			if name, ok = strings.CutSuffix(name, ".path"); ok && name != "" && !strings.Contains(name, "..") {
				names = append(names, name)
			}
		}
	}
	return names
}
