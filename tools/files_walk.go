package tools

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/cordonhq/cordon/fsfence"
	"github.com/cordonhq/cordon/sandbox"
)

// treeWalk is the walk that glob and grep share: every listing goes through
// the fence, .git directories are skipped, and so is whatever the
// .gitignore files (the root's and nested ones) ignore.
type treeWalk struct {
	fence *fsfence.Fence
	// root is where the walk starts.
	root string
	// ignoreBase is the directory whose .gitignore applies first: the
	// workspace root when the walk starts inside it (so that searching a
	// subdirectory still honours the repository's .gitignore), else root.
	ignoreBase string
}

func newTreeWalk(f *fsfence.Fence, pol sandbox.ExecutionPolicy, root string) treeWalk {
	base := root
	if sandbox.Within(root, pol.WorkspaceRoot) {
		base = pol.WorkspaceRoot
	}
	return treeWalk{fence: f, root: root, ignoreBase: base}
}

// walkDir is a directory of the walk, open and checked by the fence. The
// walk holds one reference while it lists and descends; visit may take
// more (grep's workers open the file later) with retain, and whoever drops
// the last one closes it.
type walkDir struct {
	*fsfence.Dir
	refs atomic.Int32
}

func newWalkDir(d *fsfence.Dir) *walkDir {
	w := &walkDir{Dir: d}
	w.refs.Store(1)
	return w
}

func (d *walkDir) retain() { d.refs.Add(1) }

func (d *walkDir) release() {
	if d.refs.Add(-1) == 0 {
		d.Close()
	}
}

// visitFunc is called for every non-directory the walk keeps: its path,
// its entry, and the directory it is in (nil when root itself is a file),
// valid until visit returns unless visit retains it.
type visitFunc func(path string, d fs.DirEntry, dir *walkDir) error

// run calls visit for every file, symlink or other non-directory the walk
// keeps, in lexical order (depth first, like [fs.WalkDir]; symlinks are not
// followed). The root is opened by path through the fence; below it every
// directory is entered and every file reached through the handle of its
// checked parent ([fsfence.Dir]), one name at a time, so a name swapped for
// a symlink is never followed. The walk is written out so that a
// directory's .gitignore is found in its listing instead of by an open
// that fails in almost every directory. What the fence refuses (the
// read-deny list) is not listed, or is skipped without a word: its
// contents are not the model's business. An error of visit, or the
// context's, stops the walk and is returned; so is an error on root
// itself.
func (w treeWalk) run(ctx context.Context, visit visitFunc) error {
	d, stack, err := w.start(visit)
	if d == nil {
		return err
	}
	return w.walk(ctx, stack, d, w.root, visit)
}

// start opens the root and gathers the .gitignore files above it. When
// the root is not a directory, it visits it and returns no directory.
func (w treeWalk) start(visit visitFunc) (*walkDir, ignoreStack, error) {
	var stack ignoreStack
	// The .gitignore files above root, from the base down, apply too.
	if w.root != w.ignoreBase {
		if rel, err := filepath.Rel(w.ignoreBase, filepath.Dir(w.root)); err == nil {
			dir := w.ignoreBase
			stack = stack.with(loadIgnore(w.fence, dir))
			if rel != "." {
				for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
					dir = filepath.Join(dir, part)
					stack = stack.with(loadIgnore(w.fence, dir))
				}
			}
		}
	}
	fi, err := w.fence.Stat(w.root)
	if err != nil {
		return nil, stack, err
	}
	if !fi.IsDir() {
		return nil, stack, visit(w.root, fs.FileInfoToDirEntry(fi), nil)
	}
	d, err := w.fence.OpenDir(w.root)
	if err != nil {
		return nil, stack, err
	}
	return newWalkDir(d), stack, nil
}

// walk lists dir, whose path is p, and goes through it; it drops the
// walk's reference to dir.
func (w treeWalk) walk(ctx context.Context, stack ignoreStack, dir *walkDir, p string, visit visitFunc) error {
	defer dir.release()
	entries, stack, err := w.list(dir, p, stack)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		child := joinName(p, name)
		if e.IsDir() {
			if skipDir(stack, name, child) {
				continue
			}
			sub, err := dir.OpenDir(name)
			if err != nil {
				continue // refused, gone, or no longer a directory
			}
			if err := w.walk(ctx, stack, newWalkDir(sub), child, visit); err != nil {
				return err
			}
			continue
		}
		if stack.ignored(child, false) {
			continue
		}
		if err := visit(child, e, dir); err != nil {
			return err
		}
	}
	return nil
}

// list lists dir, whose path is p, and returns the .gitignore rules in
// force in it: stack and its own. A listing that fails is an error only
// for the root; below it, the directory was refused or is gone since its
// parent was listed, and is empty.
func (w treeWalk) list(dir *walkDir, p string, stack ignoreStack) ([]fs.DirEntry, ignoreStack, error) {
	entries, err := dir.ReadDir()
	if err != nil {
		if p == w.root {
			return nil, stack, err
		}
		return nil, stack, nil
	}
	for _, e := range entries {
		if e.Name() == ".gitignore" && !e.IsDir() {
			var l *ignoreLevel
			if e.Type().IsRegular() {
				if file, err := dir.OpenFile(".gitignore"); err == nil {
					l = readIgnore(file, p)
				}
			} else {
				l = loadIgnore(w.fence, p) // a symlink: followed through the full check, as ever
			}
			stack = stack.with(l)
			break
		}
	}
	return entries, stack, nil
}

// skipDir reports whether the walk leaves out the directory name, at path
// p: .git, or what .gitignore ignores.
func skipDir(stack ignoreStack, name, p string) bool {
	return name == ".git" || stack.ignored(p, true)
}

// joinName is filepath.Join for a clean path and one name of its listing,
// which needs no cleaning.
func joinName(dir, name string) string {
	if strings.HasSuffix(dir, string(filepath.Separator)) {
		return dir + name
	}
	return dir + string(filepath.Separator) + name
}

// walkRootError turns an error on the walk's root into a tool error.
func walkRootError(tool string, pol sandbox.ExecutionPolicy, root string, err error) *ToolError {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errorf(sandbox.CodeTimeout, "%s was cancelled", tool)
	}
	return fenceError(tool, pol, root, err)
}

// isNotExist reports whether err means the path is not there.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
