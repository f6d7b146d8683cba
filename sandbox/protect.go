package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// mountPlan is what a mount-based backend must lay over the writable roots
// so that protected paths stay read-only and the read-deny list stays
// hidden.
type mountPlan struct {
	// ProtectExisting are protected paths that exist: re-bound read-only.
	ProtectExisting []string
	// ProtectMissing are the first missing components of protected paths
	// inside writable roots. Each is covered by an empty read-only
	// directory, so nothing can be created there: writing inside fails with
	// "Read-only file system", creating a file of that name with "Is a
	// directory". A directory, not /dev/null: tools that list the
	// workspace (git add -A) skip an empty directory but choke on a device
	// node. The mount leaves an empty directory on the host, which the stub
	// registry removes afterwards.
	ProtectMissing []string
	// PinDirs are the existing directories between a writable root and a
	// protected path: bound onto themselves so that renaming one (mv .git
	// .git-old, mv ~/.config …) cannot carry the protection away.
	PinDirs []string
	// HideDirs and HideFiles are existing read-deny entries.
	HideDirs  []string
	HideFiles []string
}

// ErrProtectedSymlink is returned when a protected path is, or passes
// through, a symlink inside a writable root: following it could protect
// the wrong place, so the sandbox is refused instead.
var ErrProtectedSymlink = fmt.Errorf("protected path is a symlink")

// planMounts works out the mounts for a policy. Only protected paths inside
// a writable root need a mount: everything else is read-only already.
func planMounts(p ExecutionPolicy) (mountPlan, error) {
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
		for dir := filepath.Dir(prot); dir != root && Within(dir, root); dir = filepath.Dir(dir) {
			if fi, err := os.Lstat(dir); err == nil && fi.IsDir() && !slices.Contains(plan.PinDirs, dir) {
				plan.PinDirs = append(plan.PinDirs, dir)
			}
		}
		if missing != "" {
			if !slices.Contains(plan.ProtectMissing, missing) {
				plan.ProtectMissing = append(plan.ProtectMissing, missing)
			}
			continue
		}
		plan.ProtectExisting = append(plan.ProtectExisting, existing)
	}
	slices.SortFunc(plan.PinDirs, func(a, b string) int { return len(a) - len(b) })
	for _, d := range p.ReadDeny {
		fi, err := os.Stat(d)
		switch {
		case err != nil:
		case fi.IsDir():
			plan.HideDirs = append(plan.HideDirs, d)
		default:
			plan.HideFiles = append(plan.HideFiles, d)
		}
	}
	return plan, nil
}

func containingRoot(path string, roots []string) string {
	best := ""
	for _, r := range roots {
		if Within(path, r) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// walkProtected follows prot component by component from root without
// following symlinks. It returns prot when it exists, or the first missing
// component when it does not.
func walkProtected(root, prot string) (existing, missing string, err error) {
	rel, err := filepath.Rel(root, prot)
	if err != nil {
		return "", "", err
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." || part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			if os.IsNotExist(err) {
				return "", cur, nil
			}
			return "", "", fmt.Errorf("protected path %s: %w", prot, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", "", fmt.Errorf("%w: %s passes through the symlink %s; refusing to build a sandbox that would follow it", ErrProtectedSymlink, prot, cur)
		}
		if !fi.IsDir() && cur != prot {
			// A file where a directory would be (a linked worktree's .git
			// file): keeping it read-only keeps the path from being made.
			return cur, "", nil
		}
	}
	return prot, "", nil
}

// stubRegistry counts, per path, the live sandboxes that rely on a mount
// stub. A stub is removed only when the last of them is done: removing a
// mount point on the host detaches the mount in every other namespace,
// which would unprotect a sandbox still running.
//
// Every run that relies on stubs also journals them under
// <state-dir>/stubs (one file per run, removed when the run ends), so that
// the stubs of a cordon killed before it could clean up are removed by the
// next one (CleanStaleStubs).
type stubRegistry struct {
	mu   sync.Mutex
	refs map[string]int
	runs int
}

var stubs = &stubRegistry{refs: map[string]int{}}

// claim takes a reference on each stub path. A path that exists but is a
// live stub of ours is still treated as a stub, not as a user's file.
func (r *stubRegistry) claim(plan *mountPlan, stateDir string) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	var claimed []string
	for _, p := range plan.ProtectMissing {
		r.refs[p]++
		claimed = append(claimed, p)
	}
	// An "existing" protected path may be a stub that another sandbox of
	// this process created: claim it so it is not removed under us.
	for _, p := range plan.ProtectExisting {
		if r.refs[p] > 0 {
			r.refs[p]++
			claimed = append(claimed, p)
		}
	}
	journal := ""
	if stateDir != "" && len(claimed) > 0 {
		r.runs++
		journal = journalStubs(stateDir, r.runs, claimed)
	}
	return func() {
		r.release(claimed)
		if journal != "" {
			os.Remove(journal)
		}
	}
}

func (r *stubRegistry) release(paths []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range paths {
		r.refs[p]--
		if r.refs[p] > 0 {
			continue
		}
		delete(r.refs, p)
		removeStub(p)
	}
}

// removeStub deletes p only if it still looks like what bwrap created, an
// empty directory; anything else is the user's.
func removeStub(p string) {
	if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
		os.Remove(p) // fails, as it should, when not empty
	}
}

func stubJournalDir(stateDir string) string { return filepath.Join(stateDir, "stubs") }

// journalStubs records one run's stubs as <pid>-<run>, a path a line.
func journalStubs(stateDir string, run int, paths []string) string {
	dir := stubJournalDir(stateDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	entry := filepath.Join(dir, fmt.Sprintf("%d-%d", os.Getpid(), run))
	if err := os.WriteFile(entry, []byte(strings.Join(paths, "\n")), 0o600); err != nil {
		return ""
	}
	return entry
}

// CleanStaleStubs removes the mount stubs journaled by cordon processes
// that no longer run (killed before they could clean up), as long as each
// still looks exactly like a stub: an empty directory.
func CleanStaleStubs(stateDir string) {
	dir := stubJournalDir(stateDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pidText, _, ok := strings.Cut(e.Name(), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		entry := filepath.Join(dir, e.Name())
		if data, err := os.ReadFile(entry); err == nil {
			for _, p := range strings.Split(string(data), "\n") {
				if filepath.IsAbs(p) {
					removeStub(p)
				}
			}
		}
		os.Remove(entry)
	}
}
