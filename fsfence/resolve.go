package fsfence

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// resolveMode says what a write resolution may do on its way.
type resolveMode struct {
	create      bool // make missing parent directories (each checked first)
	followFinal bool // follow a symlink in the final component (write, edit) or act on the link itself (remove)
	probe       bool // CheckWrite: decide without touching anything; missing parents are fine
}

// resolved is a write target: a checked directory handle and a name in it.
type resolved struct {
	dir  *dirHandle
	name string // "" when the target is the writable root itself
	ent  entry  // the final name, looked at without following it
}

func (r *resolved) close() {
	if r == nil {
		return
	}
	r.ent.dir.close()
	r.dir.close()
}

// resolveWrite maps path onto a writable root and walks it beneath that
// root's handle, following symlinks itself (see the package doc). Whatever
// it returns has passed every protection check.
func (f *Fence) resolveWrite(op, path string, mode resolveMode) (*resolved, error) {
	p, err := cleanAbs(path)
	if err != nil {
		return nil, pathErr(op, path, err)
	}
	m := f.writes.matcher()
	outside := ReasonOutsideRoots
	for range maxSymlinkHops + 1 {
		r, next, err := f.resolveOnce(op, path, p, m, mode, outside)
		if err != nil || r != nil {
			return r, err
		}
		// A symlink: start over with where it leads, from the top, so the
		// new path meets the lexical checks and the root mapping too.
		p, outside = next, ReasonSymlinkEscape
	}
	return nil, pathErr(op, path, syscall.ELOOP)
}

// resolveOnce walks the cleaned path p. It returns either a target, or the
// path a symlink on the way leads to (for the caller to start over), or an
// error.
func (f *Fence) resolveOnce(op, orig, p string, m *matcher, mode resolveMode, outside Reason) (*resolved, string, error) {
	h, rel, err := f.openRootFor(op, orig, p, outside)
	if err != nil {
		return nil, "", err
	}
	fail := func(err error) (*resolved, string, error) {
		h.close()
		return nil, "", err
	}
	// The lexical view: a protected path that is a symlink, or is reached
	// through one, is refused here before anything follows it.
	if e, ok := m.pathHit(p); ok {
		return fail(denied(op, orig, f.reasonFor(e), e))
	}
	if n, ok := protectedNameIn(rel, f.cfg.ProtectedNames); ok {
		return fail(denied(op, orig, ReasonProtected, n))
	}
	if n, ok := protectedWayEndingIn(rel, f.cfg.ProtectedNames); ok {
		return fail(denied(op, orig, ReasonProtected, n))
	}
	if len(rel) > 0 && slices.Contains(f.cfg.ProtectedFileNames, rel[len(rel)-1]) {
		return fail(denied(op, orig, ReasonProtected, rel[len(rel)-1]))
	}
	// The identities of the directories walked through so far: the root's
	// ancestry, then each directory entered. Checking a directory about to
	// be made against them is O(1) per step, where walking ".." again from
	// every new directory would make deep paths quadratic.
	walked, err := h.lineage()
	if err != nil {
		return fail(pathErr(op, orig, err))
	}
	if len(rel) == 0 {
		if err := f.checkDir(op, orig, h, "", m, nil); err != nil {
			return fail(err)
		}
		return &resolved{dir: h, ent: entry{kind: kindDir}}, "", nil
	}
	made := 0
	for i := 0; i < len(rel)-1; i++ {
		e, err := h.child(rel[i])
		if err != nil {
			return fail(pathErr(op, orig, err))
		}
		switch e.kind {
		case kindDir:
			h.close()
			h = e.dir
			walked = append(walked, e.info.id)
		case kindSymlink:
			next, err := f.linkTarget(h, e.target, rel[i+1:])
			if err != nil {
				return fail(pathErr(op, orig, err))
			}
			h.close()
			return nil, next, nil
		case kindMissing:
			rest := filepath.Join(rel[i:]...)
			if mode.probe {
				// Decide on what would be created, create nothing.
				if err := f.checkDir(op, orig, h, rest, m, nil); err != nil {
					return fail(err)
				}
				if ent, ok := m.idHit(walked); ok {
					return fail(denied(op, orig, f.reasonFor(ent), ent))
				}
				return &resolved{dir: h, name: rest}, "", nil
			}
			if !mode.create {
				return fail(pathErr(op, orig, syscall.ENOENT))
			}
			if err := f.checkDir(op, orig, h, rel[i], m, walked); err != nil {
				return fail(err)
			}
			// Bounded: something racing us could remove what we make.
			if made++; made > len(rel)+8 {
				return fail(pathErr(op, orig, syscall.EAGAIN))
			}
			if err := h.mkdir(rel[i]); err != nil {
				return fail(pathErr(op, orig, err))
			}
			i-- // look at it again, like any other component
		default:
			return fail(pathErr(op, orig, syscall.ENOTDIR))
		}
	}
	name := rel[len(rel)-1]
	if hook := testHookAfterWalk; hook != nil {
		hook()
	}
	if err := f.checkDir(op, orig, h, name, m, nil); err != nil {
		return fail(err)
	}
	if ent, ok := m.idHit(walked); ok {
		return fail(denied(op, orig, f.reasonFor(ent), ent))
	}
	e, err := h.child(name)
	if err != nil {
		return fail(pathErr(op, orig, err))
	}
	r := &resolved{dir: h, name: name, ent: e}
	if e.kind == kindSymlink && mode.followFinal {
		next, err := f.linkTarget(h, e.target, nil)
		r.close()
		if err != nil {
			return nil, "", pathErr(op, orig, err)
		}
		return nil, next, nil
	}
	if e.kind != kindMissing {
		if ent, ok := m.idHit([]fileID{e.info.id}); ok {
			r.close()
			return nil, "", denied(op, orig, f.reasonFor(ent), ent)
		}
	}
	return r, "", nil
}

// openRootFor opens the innermost existing writable root containing p and
// returns p's components below it.
func (f *Fence) openRootFor(op, orig, p string, outside Reason) (*dirHandle, []string, error) {
	for _, root := range f.cfg.WritableRoots {
		rel, ok := relTo(root, p)
		if !ok {
			continue
		}
		h, err := openRoot(root)
		switch {
		case errors.Is(err, errRootMissing):
			continue // matches nothing until it exists
		case errors.Is(err, errRootNotCanonical):
			return nil, nil, denied(op, orig, ReasonRootNotCanonical, root)
		case err != nil:
			return nil, nil, pathErr(op, orig, fmt.Errorf("opening writable root %s: %w", root, err))
		}
		return h, rel, nil
	}
	return nil, nil, denied(op, orig, outside, "")
}

// checkDir decides protection for name (possibly several components, or
// none) inside the resolved directory h: by the kernel's view of h plus the
// name, and by the identity of h and all its ancestors — walked up from h
// now when ids is nil, else the given ones. The lexical path was already
// checked by the caller.
func (f *Fence) checkDir(op, orig string, h *dirHandle, name string, m *matcher, ids []fileID) error {
	dp, err := h.realPath()
	if err != nil {
		return pathErr(op, orig, err)
	}
	if e, ok := m.pathHit(filepath.Join(dp, name)); ok {
		return denied(op, orig, f.reasonFor(e), e)
	}
	if ids == nil {
		if ids, err = h.lineage(); err != nil {
			return pathErr(op, orig, err)
		}
	}
	if e, ok := m.idHit(ids); ok {
		return denied(op, orig, f.reasonFor(e), e)
	}
	return nil
}

// linkTarget is the path a symlink in h leads to, with rest appended. A
// relative target is joined to the kernel's view of h (where the link
// really is), not to the caller's path, which may itself have come through
// links. ".." in the result is resolved lexically, like everywhere else.
func (f *Fence) linkTarget(h *dirHandle, target string, rest []string) (string, error) {
	base := target
	if !filepath.IsAbs(target) {
		dp, err := h.realPath()
		if err != nil {
			return "", err
		}
		base = filepath.Join(dp, target)
	}
	return filepath.Clean(filepath.Join(append([]string{base}, rest...)...)), nil
}

// reasonFor names the list an entry came from; protected wins when an
// entry is on both.
func (f *Fence) reasonFor(entry string) Reason {
	if slices.Contains(f.cfg.ReadDeny, entry) && !slices.Contains(f.cfg.Protected, entry) {
		return ReasonReadDeny
	}
	return ReasonProtected
}

// protectedWayEndingIn returns the first of names of three or more
// components whose inner part (two or more of its leading components)
// ends rel: written as a file, such a path stands where the name's tool
// expects a directory and may read it as a pointer elsewhere, as
// Jujutsu reads a .jj/repo file to find the repository and its
// config.toml. The first component alone is left writable (a kernel
// tree's .config file is not ~/.config).
func protectedWayEndingIn(rel, names []string) (string, bool) {
	for _, n := range names {
		parts := strings.Split(n, "/")
		for k := 2; k < len(parts); k++ {
			if k <= len(rel) && slices.EqualFunc(rel[len(rel)-k:], parts[:k], strings.EqualFold) {
				return n, true
			}
		}
	}
	return "", false
}

// protectedNameIn returns the first of names whose components follow each
// other somewhere in rel, ignoring case.
func protectedNameIn(rel, names []string) (string, bool) {
	for _, n := range names {
		parts := strings.Split(n, "/")
		for i := 0; i+len(parts) <= len(rel); i++ {
			if slices.EqualFunc(rel[i:i+len(parts)], parts, strings.EqualFold) {
				return n, true
			}
		}
	}
	return "", false
}
