package guard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cordonhq/cordon/internal/pathx"
	"github.com/cordonhq/cordon/sandbox/internal/gitrepo"
)

// guardBaseline is what the first of overlapping calls on one root saw:
// the state every guarded path goes back to, and the repositories that
// existed. It is kept in <state-dir>/guard/ (which no sandbox can read or
// write), so that the baseline is shared by every cordon process using
// that state directory and survives a cordon that is killed mid-call: the
// next call on the root, or the next cordon start, restores it first.
type guardBaseline struct {
	Root  string                `json:"root"`
	Paths map[string]*pathState `json:"paths"` // by path relative to Root
	Repos []string              `json:"repos"`
	// Taken is when the repositories were found (Unix nanoseconds): the
	// audit searches every directory changed since then.
	Taken int64 `json:"taken,omitempty"`
	// Whole: Repos came from a search of the whole root, not a bounded
	// one, and the audit searches the whole root too.
	Whole bool `json:"whole,omitempty"`
	// GitStates fingerprints the unfinished rebases and cherry-picks of
	// Repos (gitstate.go). Nil in an older cordon's baseline: all of them
	// then count as the command's.
	GitStates map[string]string `json:"git_states"`
	// ReadDeny are the read-deny entries of every call that joined: the
	// audit moves none of them, nor anything that holds one.
	ReadDeny []string `json:"read_deny,omitempty"`
	// Names are the protected names the audit looks for at any depth, and
	// Named those that existed (relative to Root), the first call's like
	// Repos. NamesKnown is false in an older cordon's baseline, which
	// recorded none: its audit sets no name aside.
	Names      []string `json:"names,omitempty"`
	Named      []string `json:"named,omitempty"`
	NamesKnown bool     `json:"names_known,omitempty"`
	// Tools names the tool each of Names belongs to, for what the audit
	// says it set aside.
	Tools map[string]string `json:"tools,omitempty"`
	// InnerRoots are Set.InnerRoots, which the audit leaves alone.
	InnerRoots []string `json:"inner_roots,omitempty"`
	// Scratch are the Set.Scratch of every call that joined.
	Scratch []string `json:"scratch,omitempty"`
	// GuardedSince is when the earliest cordon process that joined
	// started (Unix nanoseconds; 0 in an older cordon's baseline). Beyond
	// the search depth the audit looks into every directory changed since
	// then, not only since this baseline: a deep directory an earlier call
	// made is looked in again, so that a repository staged in it over two
	// calls is the command's too.
	GuardedSince int64 `json:"guarded_since,omitempty"`
	// HostChanged are the paths (relative to Root) that the host replaced
	// while a joined call's sandbox lived, as its watch saw; HostChangedAll
	// that a watch lost events and cannot tell which. The restore keeps
	// the host's version of those aside (restorePath).
	HostChanged    []string `json:"host_changed,omitempty"`
	HostChangedAll bool     `json:"host_changed_all,omitempty"`
}

// HostChanges are the paths (absolute) a call's watch saw the host
// replace; "" among them when it lost events.
type HostChanges []string

// noteHost records host's paths in the baseline, and reports whether that
// changed it.
func (b *guardBaseline) noteHost(host HostChanges) bool {
	changed := false
	for _, p := range host {
		if p == "" {
			changed = changed || !b.HostChangedAll
			b.HostChangedAll = true
			continue
		}
		if p == b.Root || pathx.Within(b.Root, p) {
			// The root, or a directory that holds it, was moved: the
			// host's hand is on everything beneath.
			changed = changed || !b.HostChangedAll
			b.HostChangedAll = true
			continue
		}
		if rel, ok := pathx.RelUnder(b.Root, p); ok && !slices.Contains(b.HostChanged, rel) {
			b.HostChanged = append(b.HostChanged, rel)
			changed = true
		}
	}
	return changed
}

// hostChangedAt reports whether the host changed rel, or a directory that
// holds it.
func (b *guardBaseline) hostChangedAt(rel string) bool {
	if b.HostChangedAll {
		return true
	}
	return slices.ContainsFunc(b.HostChanged, func(h string) bool {
		return rel == h || strings.HasPrefix(rel, h+"/")
	})
}

// Store coordinates the calls that guard one root: begin joins (the
// first takes the baseline), end leaves (the last restores it).
type Store interface {
	Begin(set Set) (Hold, error)
}

// Hold is one call's membership; end returns what the last call to
// end undid (nothing, for the others). endAfterHost ends it too, after
// telling the store which paths the host replaced while the call's
// sandbox lived, whichever call ends last.
type Hold interface {
	End() ([]Change, error)
	EndAfterHost(host HostChanges) ([]Change, error)
}

// StoreFor returns the store of a state directory: shared through lock
// files where there is one, this process's memory where there is none.
func StoreFor(stateDir string) Store {
	if stateDir != "" {
		if s := fileStoreFor(stateDir); s != nil {
			return s
		}
	}
	return memStore
}

// baselineClock is when a baseline is taken; tests move it.
var baselineClock = time.Now

// takeBaseline records set's paths beneath its root.
func takeBaseline(set Set) (*guardBaseline, error) {
	// The policy's repositories were found just before (a cached policy
	// is one its watch shows unchanged until now); the audit's slack for
	// change times covers the gap.
	base := &guardBaseline{Root: set.Root, Paths: map[string]*pathState{}, Repos: set.Repos, Taken: baselineClock().UnixNano(),
		Names: set.Names, Tools: set.Tools, NamesKnown: true, InnerRoots: set.InnerRoots}
	named := set.Named
	base.Whole = set.Whole
	if set.Incomplete && !set.Whole {
		// Beyond the bound, a repository the baseline did not know would
		// be taken for a command's: know them all.
		base.Whole = true
		whole := gitrepo.Search([]string{set.Root}, set.Names, nil, gitrepo.Bounds{Whole: true})
		for _, id := range RepoIDs(whole.Repos) {
			if !slices.Contains(base.Repos, id) {
				base.Repos = append(base.Repos, id)
			}
		}
		for _, n := range whole.Named {
			named = append(named, n.Path)
		}
	}
	for _, p := range named {
		if rel, ok := pathx.RelUnder(set.Root, p); ok && (pathx.ExistsNoFollow(p) || !slices.Contains([]string{"", p}, pathx.FileOnTheWay(set.Root, p))) && !slices.Contains(base.Named, rel) {
			base.Named = append(base.Named, rel)
		}
	}
	base.GitStates = gitStates(gitStatePaths(set.Root, repoGitDirs(base.Repos)))
	return base, base.add(set)
}

// ProcessStart is when this cordon process started: its calls' deep
// directories were all made since. A variable so that a test can be a
// cordon that started later.
var ProcessStart = time.Now()

// noteGuardedSince makes GuardedSince no later than this process's start.
func (b *guardBaseline) noteGuardedSince() {
	if t := ProcessStart.UnixNano(); b.GuardedSince == 0 || t < b.GuardedSince {
		b.GuardedSince = t
	}
}

// add records the paths of set that the baseline does not hold yet (a
// later call's policy may protect more). Their state is what the joining
// call found, which an overlapping command may have changed already; what
// that leaves in a repository the baseline does not know, the audit undoes.
func (b *guardBaseline) add(set Set) error {
	r, err := os.OpenRoot(b.Root)
	if err != nil {
		return fmt.Errorf("guard: opening %s: %w", b.Root, err)
	}
	defer r.Close()
	bud := newBudget()
	for _, st := range b.Paths {
		for _, n := range st.Tree {
			bud.nodes--
			bud.bytes -= len(n.Data)
		}
	}
	for _, d := range set.Scratch {
		if !slices.Contains(b.Scratch, d) {
			b.Scratch = append(b.Scratch, d)
		}
	}
	for _, e := range set.ReadDeny {
		if !slices.Contains(b.ReadDeny, e) {
			b.ReadDeny = append(b.ReadDeny, e)
		}
	}
	for _, p := range set.Paths {
		rel, ok := pathx.RelUnder(b.Root, p)
		if !ok || b.Paths[rel] != nil {
			continue
		}
		st, err := snapshotPath(r, rel, true, bud)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		b.Paths[rel] = &st
	}
	// The repositories stay the first call's: one that a later call's
	// policy finds may have been made by an earlier call's command, and
	// is audited like any other that appeared.
	return nil
}

// restore puts every path back and audits the repositories that appeared.
func (b *guardBaseline) restore() ([]Change, error) {
	r, err := os.OpenRoot(b.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // the root itself is gone: nothing is left to run
	}
	if err != nil {
		return nil, fmt.Errorf("guard: opening %s: %w", b.Root, err)
	}
	defer r.Close()
	rels := make([]string, 0, len(b.Paths))
	for rel := range b.Paths {
		rels = append(rels, rel)
	}
	slices.Sort(rels) // parents before what lies beneath them
	var changes []Change
	var errs []error
	for _, rel := range rels {
		c, err := restorePath(r, rel, *b.Paths[rel], b.hostChangedAt(rel))
		changes = append(changes, c...)
		errs = append(errs, err)
	}
	// A whole baseline is audited whole, still by what changed since it
	// was taken: else the audit would not list the deep directories a
	// command made, in just the workspaces (large, or flooded) where the
	// bounded search stops.
	since := time.Unix(0, b.Taken)
	if b.Taken == 0 {
		since = gitrepo.Everything // an older cordon's baseline
	}
	a := auditor{root: b.Root, keep: b.ReadDeny, scratch: b.Scratch}
	if b.NamesKnown {
		a.names, a.knownNamed, a.innerRoots, a.tools = b.Names, b.Named, b.InnerRoots, b.Tools
	}
	a.lookSince = time.Unix(0, b.GuardedSince)
	if b.GuardedSince == 0 {
		a.lookSince = time.Time{}
	}
	c, err := a.auditNewRepos(b.Repos, since, b.Whole)
	changes = append(changes, c...)
	errs = append(errs, err)
	// The unfinished operations of the repositories the baseline knew;
	// the audit saw to those of the new ones.
	c, err = a.disarmGitStates(gitStatePaths(b.Root, repoGitDirs(b.Repos)), b.GitStates)
	changes = append(changes, c...)
	errs = append(errs, err)
	return changes, errors.Join(errs...)
}

// memStore serves calls without a state directory (tests, a bare exec):
// it coordinates the calls of this process only.
var memStore = &memGuardStore{roots: map[string]*memRoot{}}

type memGuardStore struct {
	mu    sync.Mutex
	roots map[string]*memRoot
}

type memRoot struct {
	users int
	base  *guardBaseline
}

func (s *memGuardStore) Begin(set Set) (Hold, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	mr := s.roots[set.Root]
	if mr == nil {
		base, err := takeBaseline(set)
		if err != nil {
			return nil, err
		}
		base.noteGuardedSince()
		mr = &memRoot{base: base}
		s.roots[set.Root] = mr
	} else if err := mr.base.add(set); err != nil {
		return nil, err
	}
	mr.users++
	return &memHold{s: s, root: set.Root}, nil
}

type memHold struct {
	s    *memGuardStore
	root string
	done bool
}

func (h *memHold) End() ([]Change, error) { return h.EndAfterHost(nil) }

func (h *memHold) EndAfterHost(host HostChanges) ([]Change, error) {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if h.done {
		return nil, nil
	}
	h.done = true
	mr := h.s.roots[h.root]
	mr.base.noteHost(host)
	if mr.users--; mr.users > 0 {
		return nil, nil
	}
	delete(h.s.roots, h.root)
	return mr.base.restore()
}

// guardKey names a root's files in the store.
func guardKey(root string) string {
	sum := sha256.Sum256([]byte(root))
	return hex.EncodeToString(sum[:16])
}

// decodeBaseline reads a baseline as stored at path.
func decodeBaseline(path string, data []byte) (*guardBaseline, error) {
	var b guardBaseline
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("guard: %s: %w", path, err)
	}
	if b.Paths == nil {
		b.Paths = map[string]*pathState{}
	}
	return &b, nil
}

// Dir is where the guard keeps its baselines in a state directory.
func Dir(stateDir string) string { return filepath.Join(stateDir, "guard") }
