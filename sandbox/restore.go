package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cordonhq/cordon/sandbox/internal/guard"
)

// Change is one thing the guard undid, or set aside, after a command
// (see guard.Change).
type Change = guard.Change

// RecoverGuards restores what a cordon killed mid-call left guarded in
// stateDir (see guard.Recover): a server or `cordon exec` calls it first.
func RecoverGuards(stateDir string) ([]Change, error) { return guard.Recover(stateDir) }

// launchGuard is what one launch guards (sandbox/internal/guard), root by
// root, and the places it holds in the store while its command runs.
type launchGuard struct {
	store guard.Store
	sets  []guard.Set
	holds []guard.Hold
	// mounted: the backend keeps protected paths read-only by mounts
	// (bwrap) and guards them only for when a mount is lost.
	mounted bool
	// host are the paths the watch saw the host replace while the
	// sandbox lived (noteHost).
	host guard.HostChanges
}

// noteHost tells the guard which paths the host replaced while the
// sandbox lived ("" when the watch could not tell): the restore keeps the
// host's version of them aside rather than lose it.
func (g *launchGuard) noteHost(paths []string) {
	if g != nil {
		g.host = append(g.host, paths...)
	}
}

// newLaunchGuard guards paths (each beneath one of p's writable roots) and
// audits, after the command, the repositories that appear in the roots.
// Only workspace-write needs one: in read-only mode nothing but the
// session tmp is writable.
func newLaunchGuard(p ExecutionPolicy, paths []string) *launchGuard {
	if p.Mode != WorkspaceWrite {
		return nil
	}
	g := &launchGuard{store: guard.StoreFor(p.StateDir)}
	ids := guard.RepoIDs(p.Repos)
	top := outermost(paths)
	for _, root := range userRoots(p) {
		set := guard.Set{Root: root, Repos: ids, Incomplete: p.RepoScanIncomplete, Whole: p.findings().repoScanWhole, ReadDeny: readDenyIn(p.ReadDeny, root), Names: p.ProtectedNames, Scratch: scratchDirs(p), Tools: protectedNameTools}
		for _, n := range p.findings().named {
			if containingRoot(n.Path, p.WritableRoots) == root {
				set.Named = append(set.Named, n.Path)
			}
		}
		for _, r := range userRoots(p) {
			if r != root && within(r, root) {
				set.InnerRoots = append(set.InnerRoots, r)
			}
		}
		for _, path := range top {
			if containingRoot(path, p.WritableRoots) == root {
				set.Paths = append(set.Paths, path)
			}
		}
		g.sets = append(g.sets, set)
	}
	return g
}

// readDenyIn are the read-deny entries that lie beneath root or hold it.
func readDenyIn(entries []string, root string) []string {
	var in []string
	for _, e := range entries {
		if within(e, root) || within(root, e) {
			in = append(in, e)
		}
	}
	return in
}

// outermost keeps the paths that lie beneath no other of them: a path
// beneath another guarded one is in its tree already. The paths are
// absolute (each lies beneath an absolute writable root). It walks each
// path's ancestors against a set, rather than comparing every pair, which
// was most of the cost of building a confined argv (BenchmarkConfine).
func outermost(paths []string) []string {
	set := make(map[string]bool, len(paths))
	for _, p := range paths {
		set[filepath.Clean(p)] = true
	}
	var out []string
	for _, p := range paths {
		inside := false
		for d := filepath.Clean(p); d != filepath.Dir(d) && !inside; {
			d = filepath.Dir(d)
			inside = set[d]
		}
		if !inside {
			out = append(out, p)
		}
	}
	return out
}

// paths lists everything guarded, for status.
func (g *launchGuard) paths() []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, s := range g.sets {
		out = append(out, s.Paths...)
	}
	slices.Sort(out)
	return out
}

// begin records the guarded paths. It fails closed: a command whose
// protected paths cannot be recorded does not run.
func (g *launchGuard) begin() error {
	for _, set := range g.sets {
		h, err := g.store.Begin(set)
		if err != nil {
			g.end()
			if errors.Is(err, guard.ErrTooLarge) {
				hint := " (install bubblewrap, whose read-only mounts need no copy)"
				if g.mounted {
					hint = " (make the protected paths smaller, or keep them out of the writable roots)"
				}
				return &UnavailableError{Reason: fmt.Sprintf("the protected paths beneath %s cannot be guarded: %v%s", set.Root, err, hint)}
			}
			return &UnavailableError{Reason: fmt.Sprintf("guarding the protected paths beneath %s: %v", set.Root, err)}
		}
		g.holds = append(g.holds, h)
	}
	return nil
}

// end leaves the store; the last call on a root undoes what changed.
func (g *launchGuard) end() ([]Change, error) {
	var changes []Change
	var errs []error
	for _, h := range g.holds {
		c, err := h.EndAfterHost(g.host)
		changes = append(changes, c...)
		errs = append(errs, err)
	}
	g.holds = nil
	return changes, errors.Join(errs...)
}
