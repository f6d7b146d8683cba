package tools

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

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

// run calls visit for every file, symlink or other non-directory the walk
// keeps, in lexical order (depth first, like [fs.WalkDir]; symlinks are not
// followed). Every listing goes through the fence, as in
// [fsfence.Fence.WalkDir]; the walk is written out so that a directory's
// .gitignore is found in its listing instead of by an open that fails in
// almost every directory. Directories the fence refuses to list (the
// read-deny list) are skipped without a word: their contents are not the
// model's business. An error of visit, or the context's, stops the walk and
// is returned; so is an error on root itself.
func (w treeWalk) run(ctx context.Context, visit func(path string, d fs.DirEntry) error) error {
	var stack ignoreStack
	// The .gitignore files above root, from the base down, apply too.
	if w.root != w.ignoreBase {
		if rel, err := filepath.Rel(w.ignoreBase, filepath.Dir(w.root)); err == nil {
			dir := w.ignoreBase
			stack.push(loadIgnore(w.fence, dir))
			if rel != "." {
				for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
					dir = filepath.Join(dir, part)
					stack.push(loadIgnore(w.fence, dir))
				}
			}
		}
	}
	fi, err := w.fence.Stat(w.root)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return visit(w.root, fs.FileInfoToDirEntry(fi))
	}
	return w.walk(ctx, &stack, w.root, visit)
}

func (w treeWalk) walk(ctx context.Context, stack *ignoreStack, dir string, visit func(string, fs.DirEntry) error) error {
	entries, err := w.fence.ReadDir(dir)
	if err != nil {
		if dir == w.root {
			return err
		}
		return nil // refused, or gone since its parent was listed
	}
	for _, e := range entries {
		if e.Name() == ".gitignore" && !e.IsDir() {
			if stack.push(loadIgnore(w.fence, dir)) {
				defer stack.pop()
			}
			break
		}
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			if e.Name() == ".git" || stack.ignored(p, true) {
				continue
			}
			if err := w.walk(ctx, stack, p, visit); err != nil {
				return err
			}
			continue
		}
		if stack.ignored(p, false) {
			continue
		}
		if err := visit(p, e); err != nil {
			return err
		}
	}
	return nil
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
