package guard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/cordonhq/cordon/internal/filestamp"
	"github.com/cordonhq/cordon/internal/ownerwrite"
)

// A guard keeps the protected paths that no OS mechanism can keep
// read-only as they were before a command: under Landlock, which cannot
// take write access back beneath a writable root, every protected path;
// under bwrap, the protected paths that do not exist yet, which no mount
// can cover without leaving a mount point in the user's workspace. It
// records them before the command starts and, once every process of the
// command is gone (bwrap's pid namespace, the helper's subreaper), undoes
// whatever changed and says what it undid. While the command runs, what it
// wrote there exists; after the call it does not.
//
// Calls overlap (several HTTP sessions, a `cordon exec` beside a server),
// so the state to go back to is not what one call saw when it started —
// another call's command may have written there already — but what the
// first of the overlapping calls saw, and only the last of them to end
// restores it (guardstore.go).

// Set is what one launch guards beneath one writable root.
type Set struct {
	Root  string
	Paths []string
	// Repos are the gitdirs that existed before (gitrepo.Repo.GitDir, and the
	// .git pointer files); a repository that is not among them after the
	// command was made by it, and is audited (audit.go).
	Repos []string
	// Incomplete: the policy's search for repositories stopped at its
	// bound, so Repos may lack some that exist (and that a command may
	// have flooded out of reach): the baseline and the audit then search
	// the whole root.
	Incomplete bool
	// Whole: the policy's search went past its bound already, so Repos
	// and Named are the whole root's; the baseline searches no more.
	Whole bool
	// ReadDeny are the policy's read-deny entries beneath the root, which
	// the audit never moves (keptInPlace).
	ReadDeny []string
	// Names are the protected names, and Named where the policy's search
	// met them beneath the root: one that exists when the baseline is
	// taken is the human's; one that appears during the command is the
	// command's, and the audit sets it aside.
	Names []string
	Named []string
	// Tools names the tool each of Names belongs to.
	Tools map[string]string
	// InnerRoots are the other writable roots beneath Root: a protected
	// name that is one, or holds one, is writable on purpose.
	InnerRoots []string
	// Scratch are the writable directories outside the user's roots (the
	// session tmp): a symlink beneath Root that leads into one is the
	// command's, and the audit sets it aside.
	Scratch []string
}

// Change is one undo of the guard or the audit.
type Change struct {
	Path string `json:"path"`
	// What happened: "created", "changed", "removed" (and put back),
	// "redirected" (a symlink on the way was removed), "disarmed".
	What string `json:"what"`
	// Detail names the hook or configuration key that was removed.
	Detail string `json:"detail,omitempty"`
	// HostKept is where the host's version was set aside before the path
	// was restored: the host changed it while a sandbox lived
	// (setAsideHost).
	HostKept string `json:"host_kept,omitempty"`
}

func (c Change) String() string {
	s := c.Path + " (" + c.What
	if c.Detail != "" {
		s += ": " + c.Detail
	}
	if c.HostKept != "" {
		s += "; the host's version kept as " + c.HostKept
	}
	return s + ")"
}

// HostNote tells the human, when the host changed the path while a
// sandbox lived, that cordon restored it and where their version is;
// "" otherwise.
func (c Change) HostNote() string {
	if c.HostKept == "" {
		return ""
	}
	return fmt.Sprintf("the host changed %s while a sandbox lived; cordon restored the version from before and kept yours as %s: compare and keep the one you meant (a command in the sandbox may have written to it in the moment before cordon killed the sandbox)", c.Path, c.HostKept)
}

// Limits of what one root's guard may hold: beyond them the sandbox is
// refused rather than left unguarded. Variables so that tests can reach
// them cheaply.
var (
	maxGuardNodes = 20000
	maxGuardBytes = 64 << 20
)

// ErrTooLarge is returned when protected paths hold more than a guard
// can keep a copy of.
var ErrTooLarge = errors.New("too large to guard")

// node kinds.
const (
	nodeMissing = "missing"
	nodeDir     = "dir"
	nodeFile    = "file"
	nodeSymlink = "symlink"
	nodeOther   = "other"
)

// nodeState is one file or directory as the guard saw it.
type nodeState struct {
	Rel    string      `json:"rel"` // slash-separated, relative to the root
	Kind   string      `json:"kind"`
	Mode   fs.FileMode `json:"mode,omitempty"`
	Stamp  string      `json:"stamp,omitempty"`
	Target string      `json:"target,omitempty"`
	Data   []byte      `json:"data,omitempty"`
	// Links counts a file's hard links: one made to a protected file
	// would let a later write through the other name change it.
	Links uint64 `json:"links,omitempty"`
	// Mtime is put back too: tools (make, git's index) go by it.
	Mtime int64 `json:"mtime,omitempty"`
}

func (n nodeState) same(o nodeState) bool {
	return n.Rel == o.Rel && n.Kind == o.Kind && n.Mode == o.Mode && n.Stamp == o.Stamp && n.Target == o.Target
}

// pathState is a guarded path: the components that lead to it from the
// root, down to the first that is not a directory, and its tree (empty
// when it does not exist).
type pathState struct {
	Chain []nodeState `json:"chain"`
	Tree  []nodeState `json:"tree"`
}

// budget counts what a snapshot may still hold.
type budget struct{ nodes, bytes int }

func newBudget() *budget { return &budget{nodes: maxGuardNodes, bytes: maxGuardBytes} }

// snapshotPath records rel beneath root. With data set it keeps file
// contents (to restore them); without, only what lstat says (to compare).
func snapshotPath(r *os.Root, rel string, data bool, b *budget) (pathState, error) {
	var st pathState
	parts := strings.Split(rel, "/")
	for i := range len(parts) - 1 {
		n, err := lookNode(r, strings.Join(parts[:i+1], "/"), false, nil)
		if err != nil {
			return st, err
		}
		st.Chain = append(st.Chain, n)
		if n.Kind != nodeDir {
			return st, nil // rel is unreachable, hence missing
		}
	}
	err := walkNodes(r, rel, data, b, func(n nodeState) { st.Tree = append(st.Tree, n) })
	return st, err
}

// walkNodes reports rel and everything beneath it, parents first, without
// following symlinks. A missing rel reports nothing.
func walkNodes(r *os.Root, rel string, data bool, b *budget, fn func(nodeState)) error {
	n, err := lookNode(r, rel, data, b)
	if err != nil {
		return err
	}
	if n.Kind == nodeMissing {
		return nil
	}
	fn(n)
	if n.Kind != nodeDir {
		return nil
	}
	d, err := r.Open(rel)
	if err != nil {
		return fmt.Errorf("guard: reading %s: %w", rel, err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return fmt.Errorf("guard: reading %s: %w", rel, err)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := walkNodes(r, rel+"/"+name, data, b, fn); err != nil {
			return err
		}
	}
	return nil
}

// lookNode lstats rel (its parents must be real directories: the walks
// check them first) and, with data set, reads a regular file's content.
func lookNode(r *os.Root, rel string, data bool, b *budget) (nodeState, error) {
	n := nodeState{Rel: rel}
	fi, err := r.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		n.Kind = nodeMissing
		return n, nil
	case err != nil:
		return n, fmt.Errorf("guard: %s: %w", rel, err)
	}
	if b != nil {
		if b.nodes--; b.nodes < 0 {
			return n, fmt.Errorf("%w: more than %d files", ErrTooLarge, maxGuardNodes)
		}
	}
	n.Mode, n.Stamp, n.Mtime = fi.Mode()&(fs.ModePerm|fs.ModeType), filestamp.Of(fi), fi.ModTime().UnixNano()
	if !fi.IsDir() {
		n.Links = filestamp.Links(fi)
	}
	switch {
	case fi.IsDir():
		n.Kind = nodeDir
	case fi.Mode()&fs.ModeSymlink != 0:
		n.Kind = nodeSymlink
		if n.Target, err = r.Readlink(rel); err != nil {
			return n, fmt.Errorf("guard: %s: %w", rel, err)
		}
	case fi.Mode().IsRegular():
		n.Kind = nodeFile
		if data {
			if b.bytes -= int(fi.Size()); b.bytes < 0 {
				return n, fmt.Errorf("%w: more than %d MiB", ErrTooLarge, maxGuardBytes>>20)
			}
			if n.Data, err = readNoFollow(r, rel, fi.Size()); err != nil {
				return n, fmt.Errorf("guard: %s: %w", rel, err)
			}
		}
	default:
		n.Kind = nodeOther // a FIFO or device: compared, never recreated
	}
	return n, nil
}

// readNoFollow reads a regular file without following a final symlink and
// without blocking on a FIFO swapped in for it.
func readNoFollow(r *os.Root, rel string, size int64) ([]byte, error) {
	f, err := r.OpenFile(rel, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() != size {
		return nil, fmt.Errorf("changed while it was read")
	}
	return io.ReadAll(io.LimitReader(f, size+1))
}

// sameState reports whether a path looks now as it did.
func sameState(then, now pathState) bool {
	return slices.EqualFunc(then.Chain, now.Chain, nodeState.same) && slices.EqualFunc(then.Tree, now.Tree, nodeState.same)
}

// restorePath puts rel back as then was, with nothing of the command's
// left on the way: a symlink that now stands on the path is removed, a
// file where a directory stood is set aside, what
// now stands where nothing stood is removed, a tree that changed is
// replaced by the one recorded. A directory on the way that is gone stays
// gone (nothing is reachable through it; nothing is brought back to life).
//
// host says that the host changed the path while a sandbox lived (the
// watch saw it replaced, lasting_linux.go): what stands there now is the
// human's, perhaps with what a command wrote before it was killed, and it
// is set aside beside the path rather than lost.
func restorePath(r *os.Root, rel string, then pathState, host bool) ([]Change, error) {
	parts := strings.Split(rel, "/")
	abs := func(p string) string { return filepath.Join(r.Name(), filepath.FromSlash(p)) }
	for i := range len(parts) - 1 {
		comp := strings.Join(parts[:i+1], "/")
		var now nodeState
		err := ownerwrite.Unlocked(r, path.Dir(comp), false, func() (err error) {
			now, err = lookNode(r, comp, false, nil)
			return err
		})
		if err != nil {
			return nil, err
		}
		was := nodeMissing
		if i < len(then.Chain) {
			was = then.Chain[i].Kind
		}
		switch {
		case now.Kind == nodeSymlink && was != nodeSymlink:
			return []Change{{Path: abs(comp), What: "redirected"}}, ownerwrite.Unlocked(r, path.Dir(comp), false, func() error { return r.Remove(comp) })
		case (now.Kind == nodeFile || now.Kind == nodeOther) && was == nodeDir && !host:
			// A command put a file where a directory on the way stood: a
			// tool may read it as a pointer elsewhere (Jujutsu's .jj/repo
			// names the repository, and its config.toml, when it is a
			// file). It goes; the directory, moved away, stays gone.
			return []Change{{Path: abs(comp), What: "disarmed", Detail: "a file in place of a directory on the way to a protected path"}},
				SetAside(r.Name(), abs(comp))
		case now.Kind != nodeDir:
			return nil, nil // unreachable now: nothing to undo through it
		case was != nodeDir && was != nodeMissing:
			return nil, nil // the path was unreachable before, and stays git's own business
		}
	}
	var now pathState
	err := ownerwrite.Unlocked(r, rel, true, func() (err error) {
		now, err = snapshotPath(r, rel, false, nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	if slices.EqualFunc(then.Tree, now.Tree, nodeState.same) {
		return nil, nil
	}
	// Rewritten with the same content (git rewrites a submodule's config
	// to set what it already says): nothing to undo but the times.
	if same, err := sameContent(r, rel, then.Tree); err != nil || same {
		if err == nil {
			err = restoreTimes(r, then.Tree)
		}
		return nil, err
	}
	what := "changed"
	switch {
	case len(then.Tree) == 0:
		what = "created"
	case len(now.Tree) == 0:
		what = "removed"
	}
	change := Change{Path: abs(rel), What: what}
	var asideErr error
	if host && what == "changed" {
		var kept string
		asideErr = ownerwrite.Unlocked(r, path.Dir(rel), false, func() (err error) {
			kept, err = setAsideHost(r, rel, now.Tree[0].Kind)
			return err
		})
		if asideErr != nil {
			// Restored all the same: what stands there may hold a
			// command's write, which must not stay in effect.
			asideErr = fmt.Errorf("guard: keeping the host's version of %s aside: %w", abs(rel), asideErr)
		} else {
			change.HostKept = abs(kept)
		}
	}
	if len(now.Tree) > 0 {
		if err := ownerwrite.Unlocked(r, rel, true, func() error { return r.RemoveAll(rel) }); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, errors.Join(asideErr, fmt.Errorf("guard: removing %s: %w", abs(rel), err))
		}
	}
	for _, n := range then.Tree {
		if err := ownerwrite.Unlocked(r, path.Dir(n.Rel), false, func() error { return recreate(r, n) }); err != nil {
			return nil, fmt.Errorf("guard: restoring %s: %w", abs(n.Rel), err)
		}
	}
	if err := restoreTimes(r, then.Tree); err != nil {
		return nil, errors.Join(asideErr, err)
	}
	return []Change{change}, asideErr
}

// hostAsideSuffix marks the host's version of a protected path that the
// guard set aside: an inert name, which no tool reads as configuration or
// runs as a hook.
const hostAsideSuffix = ".cordon-host-"

// setAsideHost gives what stands at rel a new name beside it,
// NAME.cordon-host-<UTC time>, never over an existing file, and returns
// that name. A file or symlink is linked there (link(2) never replaces),
// so it keeps its inode, permissions and times; the caller removes rel.
// A directory is renamed, after checking the name is free: only the host
// could take it in between, the sandbox being gone.
func setAsideHost(r *os.Root, rel, kind string) (string, error) {
	stamp := rel + hostAsideSuffix + hostAsideClock().UTC().Format("20060102T150405Z")
	for i := 1; i <= 100; i++ {
		name := stamp
		if i > 1 {
			name = fmt.Sprintf("%s-%d", stamp, i)
		}
		var err error
		switch kind {
		case nodeDir:
			if _, err = r.Lstat(name); errors.Is(err, fs.ErrNotExist) {
				err = r.Rename(rel, name)
			} else if err == nil {
				err = fs.ErrExist
			}
		default:
			if err = r.Link(rel, name); err != nil && !errors.Is(err, fs.ErrExist) && kind == nodeFile {
				err = copyExcl(r, rel, name) // a file system without hard links
			}
		}
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, err
	}
	return "", fmt.Errorf("%s: every name taken", stamp)
}

// copyExcl copies the regular file rel to the new file name, with its
// permissions and modification time.
func copyExcl(r *os.Root, rel, name string) error {
	fi, err := r.Lstat(rel)
	if err != nil {
		return err
	}
	data, err := readNoFollow(r, rel, fi.Size())
	if err != nil {
		return err
	}
	n := nodeState{Rel: name, Kind: nodeFile, Mode: fi.Mode(), Data: data}
	if err := recreate(r, n); err != nil {
		return err
	}
	return r.Chtimes(name, fi.ModTime(), fi.ModTime())
}

// hostAsideClock names the set-aside versions; tests move it.
var hostAsideClock = time.Now

// restoreTimes puts the recorded modification times back, children before
// parents (making an entry touches its directory's).
func restoreTimes(r *os.Root, tree []nodeState) error {
	for i := len(tree) - 1; i >= 0; i-- {
		if n := tree[i]; n.Kind == nodeDir || n.Kind == nodeFile {
			t := time.Unix(0, n.Mtime)
			if err := r.Chtimes(n.Rel, t, t); err != nil {
				return fmt.Errorf("guard: restoring the time of %s: %w", n.Rel, err)
			}
		}
	}
	return nil
}

// sameContent reports whether rel holds what tree recorded, by kind,
// mode, link target and bytes rather than by stamp.
func sameContent(r *os.Root, rel string, tree []nodeState) (bool, error) {
	var now []nodeState
	err := walkNodes(r, rel, true, newBudget(), func(n nodeState) { now = append(now, n) })
	if errors.Is(err, ErrTooLarge) {
		return false, nil // larger than what was recorded: not the same
	}
	if err != nil {
		return false, err
	}
	return slices.EqualFunc(tree, now, func(a, b nodeState) bool {
		return a.Rel == b.Rel && a.Kind == b.Kind && a.Mode == b.Mode && a.Target == b.Target && a.Links == b.Links && bytes.Equal(a.Data, b.Data)
	}), nil
}

// recreate makes one recorded node again (parents come first).
func recreate(r *os.Root, n nodeState) error {
	perm := n.Mode & fs.ModePerm
	switch n.Kind {
	case nodeDir:
		if err := r.Mkdir(n.Rel, 0o700); err != nil {
			return err
		}
		return r.Chmod(n.Rel, perm)
	case nodeFile:
		f, err := r.OpenFile(n.Rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
		if err != nil {
			return err
		}
		if _, err := f.Write(n.Data); err != nil {
			f.Close()
			return err
		}
		if err := f.Chmod(perm); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	case nodeSymlink:
		return r.Symlink(n.Target, n.Rel)
	}
	return nil // a FIFO or device is not made again
}
