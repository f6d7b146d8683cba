package guard

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cordonhq/cordon/internal/filestamp"
	"github.com/cordonhq/cordon/internal/ownerwrite"
	"github.com/cordonhq/cordon/internal/pathx"
	"github.com/cordonhq/cordon/sandbox/internal/gitrepo"
)

// A repository that a command makes (`git init`, `cargo new`, a clone, a
// submodule or worktree added) is the command's: its hooks and
// configuration were written from inside the sandbox, and the human's git
// would run them the first time anyone types `git status` there — a
// shell prompt does. Such a repository is not refused (making one is
// ordinary work), but once the command is over cordon disarms it: hook
// files other than git's *.sample ones are set aside (renamed, see
// SetAside), configuration keys that make git run a program or read
// another file are unset (the file as it was kept beside it), and a
// commondir that leads anywhere but the repository it belongs to is set
// aside. Nothing is deleted: a human's repository that a command merely
// moved is audited too. From the next call on it is protected like any
// other.

// An auditor undoes, beneath root, what a command left for the human's
// git. It moves nothing that is a read-deny entry or holds one (keep): a
// command could otherwise dress a secret's parent as a repository's
// config or hooks, have cordon rename it out from under the read-deny
// list, and read it in the next call. Such a repository is disarmed
// whole instead (disarmWhole).
type auditor struct {
	root string
	keep []string
	// names are the protected names the audit looks for, and knownNamed
	// (relative to root) those of them that existed before the command;
	// innerRoots the writable roots beneath root, never set aside;
	// scratch the writable directories outside the user's roots (the
	// session tmp), which no link beneath root may lead into.
	names, knownNamed, innerRoots, scratch []string
	// tools names the tool each protected name belongs to.
	tools map[string]string
	// lookSince: beyond the search depth, directories changed since then
	// are looked into, not only those changed since the baseline.
	lookSince time.Time
}

// errKeptInPlace: a step of the audit would have moved a read-deny entry.
var errKeptInPlace = errors.New("it is, or holds, a read-deny entry, which cordon does not move")

// keeps reports whether p is a read-deny entry or holds one. A path
// inside an entry may move: it is set aside in its own directory, still
// beneath the entry. So may a symlink: it holds nothing (an entry is
// listed by its canonical path), and one a command put in a directory's
// place must go.
func (a auditor) keeps(p string) bool {
	if !slices.ContainsFunc(a.keep, func(e string) bool { return pathx.Within(e, p) }) {
		return false
	}
	fi, err := os.Lstat(p)
	return err != nil || fi.Mode()&fs.ModeSymlink == 0
}

// SetAside is SetAside, refused for a path the auditor keeps.
func (a auditor) setAside(p string) error {
	if a.keeps(p) {
		return fmt.Errorf("setting aside %s: %w", p, errKeptInPlace)
	}
	return SetAside(a.root, p)
}

// auditNewRepos disarms the repositories beneath the root whose gitdir is
// not among known (RepoIDs): by identity and place, so that a gitdir
// replaced by a new one of the same name is new, and so is a known one
// moved elsewhere — its hooks and configuration there were never
// guarded. since is when known was taken: every directory changed after
// it is searched. whole: known came from a search of the whole root, and
// the audit searches it whole too.
func (a auditor) auditNewRepos(known []string, since time.Time, whole bool) ([]Change, error) {
	root := a.root
	found := gitrepo.Search([]string{root}, a.names, nil, gitrepo.Bounds{Since: since, LookSince: a.lookSince, Whole: whole, Scratch: a.scratch})
	var changes []Change
	var errs []error
	// A .git symlink: no sandbox is built while one exists, so this one
	// is a command's, and the human's git would follow it wherever it
	// points.
	for _, p := range found.Symlinks {
		errs = append(errs, a.setAside(p))
		changes = append(changes, Change{Path: p, What: "disarmed", Detail: "a .git that is a symlink"})
	}
	// A link into the session tmp presents there, to the human's git and
	// editor, what the command wrote where nobody audits.
	for _, p := range found.IntoScratch {
		errs = append(errs, a.setAside(p))
		changes = append(changes, Change{Path: p, What: "disarmed", Detail: "a symlink into the session's private tmp"})
	}
	for _, r := range found.Repos {
		if r.GitDir == "" || knownRepo(known, r.GitDir) {
			continue
		}
		if !pathx.Within(r.GitDir, root) {
			// A .git file the command made that names a gitdir elsewhere:
			// in the session tmp (as writable as the root, and not
			// audited) or in another repository. The human's git would
			// follow it; it is set aside (a human's linked worktree that
			// a gitlink led here to can be put back).
			if r.DotGitFile {
				p := filepath.Join(r.Worktree, ".git")
				errs = append(errs, a.setAside(p))
				changes = append(changes, Change{Path: p, What: "disarmed", Detail: "a .git file naming a gitdir outside " + root})
			}
			continue
		}
		c, err := a.disarm(r, known)
		if errors.Is(err, errKeptInPlace) {
			c, err = a.disarmWhole(r, c, err)
		}
		changes = append(changes, c...)
		errs = append(errs, err)
	}
	c, err := a.disarmNames(found.Named)
	changes = append(changes, c...)
	errs = append(errs, err)
	return changes, errors.Join(errs...)
}

// disarmWhole disarms a new repository that a step of disarm could not,
// because it would have moved a read-deny entry (err): its HEAD is set
// aside, and git no longer takes the directory for a repository. The
// changes disarm made are kept; the error is what is left.
func (a auditor) disarmWhole(r gitrepo.Repo, changes []Change, err error) ([]Change, error) {
	head := filepath.Join(r.GitDir, "HEAD")
	if !pathx.ExistsNoFollow(head) {
		return changes, nil // set aside already (the gitdir was found twice: bare, and through a .git file)
	}
	if herr := a.setAside(head); herr != nil {
		return changes, errors.Join(err, herr)
	}
	return append(changes, Change{Path: head, What: "disarmed",
		Detail: "the HEAD of a repository made around a read-deny entry, which cordon does not move: git no longer takes it for a repository"}), nil
}

// RepoIDs are what a baseline remembers of repositories: each gitdir's
// identity (device and inode; the path where there is none) and its path.
func RepoIDs(repos []gitrepo.Repo) []string {
	var ids []string
	for _, r := range repos {
		if r.GitDir == "" {
			continue
		}
		if id := repoKey(r.GitDir); !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

func repoKey(gitdir string) string { return repoIdentity(gitdir) + "\x00" + gitdir }

// knownRepo reports whether gitdir is among known, where it was then.
// An entry without a path (a baseline that an older cordon left) matches
// by identity alone.
func knownRepo(known []string, gitdir string) bool {
	id := repoIdentity(gitdir)
	key := id + "\x00" + gitdir
	for _, k := range known {
		if k == key || k == id {
			return true
		}
	}
	return false
}

func repoIdentity(gitdir string) string {
	if fi, err := os.Lstat(gitdir); err == nil {
		if id := filestamp.Identity(fi); id != "" {
			return id
		}
	}
	return gitdir
}

func (a auditor) disarm(r gitrepo.Repo, known []string) ([]Change, error) {
	root := a.root
	var changes []Change
	var errs []error
	newCommon := !knownRepo(known, r.CommonDir)
	// A linked worktree's gitdir lives in <commondir>/worktrees/<name>;
	// a commondir pointing anywhere else borrows another repository's
	// hooks and configuration.
	if cd := filepath.Join(r.GitDir, "commondir"); pathx.ExistsNoFollow(cd) && filepath.Dir(r.GitDir) != filepath.Join(r.CommonDir, "worktrees") {
		if err := a.setAside(cd); err != nil {
			errs = append(errs, err)
		} else {
			changes = append(changes, Change{Path: cd, What: "disarmed", Detail: "a commondir outside the repository"})
		}
		newCommon = false
	}
	if newCommon && pathx.Within(r.CommonDir, root) {
		c, err := a.disarmHooks(filepath.Join(r.CommonDir, "hooks"))
		changes = append(changes, c...)
		errs = append(errs, err)
	}
	files := []string{filepath.Join(r.GitDir, "config.worktree")}
	if newCommon {
		files = append(files, filepath.Join(r.CommonDir, "config"))
	}
	for _, f := range files {
		if !pathx.Within(f, root) {
			continue
		}
		c, err := a.disarmConfig(f)
		changes = append(changes, c...)
		errs = append(errs, err)
	}
	// Its unfinished rebases and cherry-picks are the command's too.
	c, err := a.disarmGitStates(gitStatePaths(root, []string{r.GitDir}), nil)
	changes = append(changes, c...)
	errs = append(errs, err)
	return changes, errors.Join(errs...)
}

// disarmHooks removes every entry of a hooks directory but git's samples.
func (a auditor) disarmHooks(dir string) ([]Change, error) {
	root := a.root
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, nil
	}
	if !fi.IsDir() {
		if err := a.setAside(dir); err != nil {
			return nil, err
		}
		return []Change{{Path: dir, What: "disarmed", Detail: "not a directory"}}, nil
	}
	var entries []fs.DirEntry
	err = ownerwrite.WithOwnerWrite(root, dir, func() (err error) {
		entries, err = os.ReadDir(dir)
		return err
	})
	if err != nil {
		return nil, err
	}
	var changes []Change
	var errs []error
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sample") && e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if strings.Contains(e.Name(), DisarmedSuffix) {
			continue // set aside already
		}
		if err := a.setAside(p); err != nil {
			errs = append(errs, err)
			continue
		}
		changes = append(changes, Change{Path: p, What: "disarmed", Detail: "a hook made inside the sandbox"})
	}
	return changes, errors.Join(errs...)
}

// disarmConfig unsets the keys of one configuration file that run a
// program or pull in another file. A symlink in its place is set aside.
func (a auditor) disarmConfig(file string) ([]Change, error) {
	root := a.root
	fi, err := os.Lstat(file)
	switch {
	case err != nil:
		return nil, nil
	case a.keeps(file):
		// Neither set aside nor copied beside it nor rewritten by git.
		return nil, fmt.Errorf("disarming %s: %w", file, errKeptInPlace)
	case !fi.Mode().IsRegular():
		return []Change{{Path: file, What: "disarmed", Detail: "not a regular file"}}, SetAside(root, file)
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil, nil // without git, nothing reads it
	}
	list, err := gitrepo.ConfigFile(gitPath, file, "--list", "-z")
	if err != nil {
		// Unreadable, or too large to read in gitConfigTimeout: the
		// human's git, given time, might still run what it names. It is a
		// new repository's, the command's: it goes.
		return []Change{{Path: file, What: "disarmed", Detail: "a configuration git did not list: " + firstLine(err.Error())}}, SetAside(root, file)
	}
	var keys []string
	for _, kv := range strings.Split(string(list), "\x00") {
		key, value, _ := strings.Cut(kv, "\n")
		if key == "" || slices.Contains(keys, key) || !gitrepo.RunsValue(key, value) {
			continue
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	// What is unset is kept beside it, for a human who wants it back (a
	// repository of theirs that a command moved is audited too).
	if err := keepCopy(root, file); err != nil {
		return nil, err
	}
	var changes []Change
	var errs []error
	for _, key := range keys {
		// git writes the file anew beside it: its directory must be
		// writable.
		err := ownerwrite.WithOwnerWrite(root, filepath.Dir(file), func() error {
			_, err := gitrepo.ConfigFile(gitPath, file, "--unset-all", key)
			if err != nil && strings.Contains(err.Error(), "ermission denied") {
				return fs.ErrPermission
			}
			return err
		})
		if err != nil {
			// A lock file left beside it, say: the key stays unless the
			// file goes. It is a new repository's, the command's.
			os.Remove(file + ".lock")
			changes = append(changes, Change{Path: file, What: "disarmed", Detail: fmt.Sprintf("%s could not be unset (%s): the file was set aside", key, firstLine(err.Error()))})
			return changes, SetAside(root, file)
		}
		changes = append(changes, Change{Path: file, What: "disarmed", Detail: key})
	}
	return changes, errors.Join(errs...)
}

// DisarmedSuffix names what the audit set aside: git reads no hook and
// no configuration by such a name.
const DisarmedSuffix = ".cordon-disarmed"

// SetAside renames p, beneath root, to p+DisarmedSuffix, where git no
// longer runs or reads it. An earlier one of that name is kept under a
// name of its own, not removed: it may hold the human's work (a rebase's
// autostash), and a tree a command made there that cannot be removed
// (a directory without write permission in it) must not stop the rename.
func SetAside(root, p string) error {
	return inRoot(root, p, func(r *os.Root, rel string) error {
		return ownerwrite.Unlocked(r, path.Dir(rel), false, func() error {
			aside := rel + DisarmedSuffix
			if _, err := r.Lstat(aside); err == nil {
				if err := r.Rename(aside, uniqueName(r, aside)); err != nil {
					return err
				}
			}
			return r.Rename(rel, aside)
		})
	})
}

// uniqueName is name with the time appended, and a count where that is
// taken too.
func uniqueName(r *os.Root, name string) string {
	base := name + "-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	for i := 0; ; i++ {
		n := base
		if i > 0 {
			n += "-" + strconv.Itoa(i)
		}
		if _, err := r.Lstat(n); errors.Is(err, fs.ErrNotExist) {
			return n
		}
	}
}

// keepCopy copies file to file+DisarmedSuffix+"-"+the time, a name of its
// own: an earlier copy stays as it was, and one a command planted under a
// plainer name is not taken for the human's.
func keepCopy(root, file string) error {
	return inRoot(root, file, func(r *os.Root, rel string) error {
		src, err := r.OpenFile(rel, os.O_RDONLY|oNoFollow|oNonBlock, 0)
		if err != nil {
			return err
		}
		defer src.Close()
		name := uniqueName(r, rel+DisarmedSuffix)
		return ownerwrite.Unlocked(r, path.Dir(rel), false, func() error {
			f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, src) // streamed: a configuration may be large
			return errors.Join(err, f.Close())
		})
	})
}

// inRoot runs fn on p, which lies beneath root, through root opened as an
// os.Root: nothing on the way is followed out of it.
func inRoot(root, p string, fn func(r *os.Root, rel string) error) error {
	rel, ok := pathx.RelUnder(root, p)
	if !ok {
		return fmt.Errorf("%s is not beneath %s", p, root)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	return fn(r, rel)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// disarmNames sets aside the protected names that appeared beneath the
// root during the command (a new pkg/.claude/settings.json, pkg/.envrc):
// the agent or editor the human opens there would load them. A symlink
// on the way to one (pkg/.hg -> elsewhere) is set aside instead, since
// the human's tool would follow it. Nothing is deleted: NAME is renamed
// NAME.cordon-disarmed.
func (a auditor) disarmNames(named []gitrepo.NamedPath) ([]Change, error) {
	var changes []Change
	var errs []error
	for _, n := range named {
		if rel, ok := pathx.RelUnder(a.root, n.Path); !ok || slices.Contains(a.knownNamed, rel) {
			continue
		}
		target, what := a.namedTarget(n)
		if target == "" || slices.ContainsFunc(a.innerRoots, func(r string) bool { return pathx.Within(r, target) }) {
			continue
		}
		if err := a.setAside(target); err != nil {
			errs = append(errs, err)
			continue
		}
		changes = append(changes, Change{Path: target, What: "disarmed", Detail: what + " made inside the sandbox, for " + a.toolOf(n.Name)})
	}
	return changes, errors.Join(errs...)
}

// namedTarget is what to set aside for n: n itself when it exists, a
// symlink or a file on the way to it (a file there can name a place
// elsewhere, as Jujutsu's .jj/repo does), or "" when none (the rest of
// the name was never made).
func (a auditor) namedTarget(n gitrepo.NamedPath) (target, what string) {
	cur := n.Dir
	parts := strings.Split(n.Name, "/")
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		switch {
		case err != nil:
			return "", ""
		case i == len(parts)-1:
			return cur, "a protected name"
		case fi.Mode()&fs.ModeSymlink != 0:
			return cur, "a symlink on the way to a protected name"
		case !fi.IsDir() && i == 0:
			return "", "" // a kernel tree's .config file is not ~/.config
		case !fi.IsDir():
			return cur, "a file on the way to a protected name"
		}
	}
	return "", ""
}

// toolOf names the tool a protected name belongs to (Set.Tools).
func (a auditor) toolOf(name string) string {
	if t, ok := a.tools[name]; ok {
		return t
	}
	for n, t := range a.tools {
		if strings.EqualFold(n, name) {
			return t
		}
	}
	return "protected_paths in cordon's config"
}
