package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/cordonhq/cordon/internal/pathx"
)

// mountPlan is what a backend must lay over the writable roots so that
// protected paths stay read-only and the read-deny list stays hidden.
type mountPlan struct {
	// ProtectExisting are protected paths that exist: a mount-based
	// backend binds them read-only.
	ProtectExisting []string
	// Guard are the protected paths that do not exist yet. No mount can
	// keep them from being made without leaving a mount point on the
	// host, so they are guarded instead: cordon looks at them before the
	// command and undoes, after it, whatever it made there (package guard).
	Guard []string
	// ProtectMissing are the first missing components of the Guard paths,
	// for a backend that can refuse the creation of a path that does not
	// exist (Seatbelt).
	ProtectMissing []string
	// Rewritten are existing protected paths that git rewrites unchanged
	// (a submodule's config): guarded rather than bound read-only, and
	// refused outright by a backend that has no guard (Seatbelt).
	Rewritten []string
	// PinDirs are the existing directories between a writable root and a
	// protected path or an existing read-deny entry: bound onto themselves
	// so that renaming one (mv .git .git-old, mv ~/.config …) cannot carry
	// the protection or the hiding away.
	PinDirs []string
	// HideDirs and HideFiles are existing read-deny entries.
	HideDirs  []string
	HideFiles []string
	// ReadDenyLinks are the symlinks in the writable roots on the way to
	// read-deny entries, which are in Guard too: a backend that can keep a
	// path from being changed refuses their change (Seatbelt).
	ReadDenyLinks []string
}

// pin adds dir to PinDirs once, if it is a directory (not a symlink).
func (plan *mountPlan) pin(dir string) {
	if fi, err := os.Lstat(dir); err == nil && fi.IsDir() && !slices.Contains(plan.PinDirs, dir) {
		plan.PinDirs = append(plan.PinDirs, dir)
	}
}

// pinParents pins the directories between root and path, both excluded.
func (plan *mountPlan) pinParents(path, root string) {
	for dir := filepath.Dir(path); dir != root && within(dir, root); dir = filepath.Dir(dir) {
		plan.pin(dir)
	}
}

// errProtectedSymlink is returned when a protected path is, or passes
// through, a symlink inside a writable root: following it could protect
// the wrong place, so the sandbox is refused instead.
var errProtectedSymlink = fmt.Errorf("protected path is a symlink")

// planMounts works out the mounts for a policy. Only protected paths inside
// a writable root need one: everything else is read-only already.
func planMounts(p ExecutionPolicy) (mountPlan, error) {
	if p.findings().unconfinable != nil {
		return mountPlan{}, p.findings().unconfinable
	}
	var plan mountPlan
	for _, prot := range p.Protected {
		root := containingRoot(prot, p.WritableRoots)
		if root == "" {
			continue
		}
		existing, missing, err := walkProtected(root, prot)
		if err != nil {
			return mountPlan{}, err
		}
		floor := p.findings().pinFloors[prot]
		for dir := filepath.Dir(prot); dir != root && within(dir, root); dir = filepath.Dir(dir) {
			if floor != "" && (dir == floor || !within(dir, floor)) {
				break
			}
			plan.pin(dir)
		}
		switch {
		case missing == "" && p.findings().guardOnly[prot]:
			plan.Guard = append(plan.Guard, prot)
			plan.Rewritten = append(plan.Rewritten, prot)
		case missing != "":
			plan.Guard = append(plan.Guard, prot)
			if !slices.Contains(plan.ProtectMissing, missing) {
				plan.ProtectMissing = append(plan.ProtectMissing, missing)
			}
		case !slices.Contains(p.ReadDeny, existing):
			// (an existing read-deny entry is hidden below, read-only)
			plan.ProtectExisting = append(plan.ProtectExisting, existing)
		}
	}
	for _, d := range p.ReadDeny {
		fi, err := os.Stat(d)
		switch {
		case err != nil:
			continue
		case fi.IsDir():
			plan.HideDirs = append(plan.HideDirs, d)
		default:
			plan.HideFiles = append(plan.HideFiles, d)
		}
		// The hiding mount moves with a renamed parent, and the next
		// call's policy would look for the entry where it no longer is
		// (mv secrets-parent elsewhere, then cat elsewhere/secrets/key):
		// its parents are pinned as a protected path's are.
		if root := containingRoot(d, userRoots(p)); root != "" {
			plan.pinParents(d, root)
		}
	}
	// A symlink on the way to a read-deny entry cannot be mounted over:
	// it is guarded, and its parents pinned, as are the directories on the
	// way and theirs.
	for _, l := range p.findings().readDenyLinks {
		if root := containingRoot(l, userRoots(p)); root != "" {
			if !slices.Contains(plan.Guard, l) {
				plan.Guard = append(plan.Guard, l)
				plan.ReadDenyLinks = append(plan.ReadDenyLinks, l)
			}
			plan.pinParents(l, root)
		}
	}
	for _, d := range p.findings().readDenyDirs {
		if root := containingRoot(d, userRoots(p)); root != "" && d != root {
			plan.pin(d)
			plan.pinParents(d, root)
		}
	}
	slices.SortFunc(plan.PinDirs, func(a, b string) int { return len(a) - len(b) })
	return plan, nil
}

// checkProtected makes planMounts' refusals and nothing else, for a
// backend that mounts nothing (Landlock guards every protected path): it
// spares the stat of every pin directory and read-deny entry, which was
// most of the cost of a Landlock Confine (BenchmarkConfine).
func checkProtected(p ExecutionPolicy) error {
	if p.findings().unconfinable != nil {
		return p.findings().unconfinable
	}
	for _, prot := range p.Protected {
		if root := containingRoot(prot, p.WritableRoots); root != "" {
			if _, _, err := walkProtected(root, prot); err != nil {
				return err
			}
		}
	}
	return nil
}

func containingRoot(path string, roots []string) string {
	best := ""
	for _, r := range roots {
		if within(path, r) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// walkProtected follows prot component by component from root without
// following symlinks. It returns prot when it exists, or the first missing
// component when it does not; a file where a directory would be (a linked
// worktree's .git file) is returned as existing: keeping it read-only keeps
// the path from being made.
func walkProtected(root, prot string) (existing, missing string, err error) {
	w, err := pathx.WalkComponents(root, prot)
	switch {
	case err != nil:
		return "", "", fmt.Errorf("protected path %s: %w", prot, err)
	case w.Link != "":
		return "", "", fmt.Errorf("%w: %s passes through the symlink %s; refusing to build a sandbox that would follow it", errProtectedSymlink, prot, w.Link)
	case w.Missing != "":
		return "", w.Missing, nil
	case len(w.Steps) > 0 && !w.Steps[len(w.Steps)-1].Dir:
		return w.Steps[len(w.Steps)-1].Path, "", nil
	}
	return prot, "", nil
}
