package fsfence

import (
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
)

// Resolving the entries is most of what a check costs if it is done from
// scratch: every read-deny and protected entry is resolved component by
// component (an lstat each, more for entries that do not exist) at every
// call, and grep makes one call per file it opens. A fence therefore keeps
// the resolved entries in an [entryCache] and, at every call, checks with
// one lstat per path the resolution looked at that they are still what
// resolving again would give.
//
// What can change between two calls is the file system: an entry, or a
// directory or symlink on its way, may be created, removed, renamed,
// replaced by a symlink, re-pointed or mounted over (~/.aws made after the
// fence was built; git replacing .git/config with a new inode; an agent
// swapping <root>/.git for a symlink to a fresh directory). The resolved
// forms of an entry are a function of exactly the lstat(2) results (and
// symlink targets) that [resolveEntry] met on the way: its canonical path
// depends on which of those paths exist, are directories or are symlinks
// and where the symlinks point, and its identity is the device and inode
// of the last one. [buildMatcher] records every one of those observations
// and derives the matcher from them alone, never from a second look, so
// the cached matcher is what a fresh resolution would produce whenever the
// same paths look the same again. [entrySnapshot.current] looks at all of
// them again before every check (type, device and inode, and the target of
// every symlink, compared by content so that a recycled inode number
// cannot hide a re-pointed link); any difference, including a path that
// cannot be looked at, throws the snapshot away and resolves afresh. So the
// cache is never older than the call using it, and a check sees the
// entries as they are at that call, as before: an alias that has appeared
// since (a symlink in a writable root to a protected directory, a parent of
// an entry replaced by a symlink, a hard link to a replaced entry) is
// refused exactly as by a fence built at that moment. The looks are not
// atomic, but neither was resolving afresh: the window between looking at
// an entry and using the answer is the same.
//
// Nothing else is cached: the path asked for, the kernel's view of the
// opened handle and the device and inode of the object and of every
// ancestor are looked at anew in every call, and compared with the entries'
// forms just validated.

// maxEvalLinks is how many symlinks [resolveEntry] follows for one entry,
// as [filepath.EvalSymlinks] does.
const maxEvalLinks = 255

// cacheEntries reports whether [resolveEntry] mirrors
// [filepath.EvalSymlinks] on this platform. On Windows (volume names,
// junctions, short names) it does not, and every call resolves its entries
// afresh with [newMatcher].
const cacheEntries = runtime.GOOS != "windows"

// pathState is what one lstat of a path saw: all an entry's resolution
// depends on. A path that could not be looked at is kindMissing.
type pathState struct {
	kind   kind
	id     fileID // unset when kindMissing
	target string // kindSymlink: where it points
}

func (a pathState) same(b pathState) bool {
	return a.kind == b.kind && a.target == b.target && (a.kind == kindMissing || a.id.same(b.id))
}

// observation is one path an entry's resolution looked at and what it saw.
type observation struct {
	path  string
	state pathState
}

// resolveEntry resolves the cleaned absolute entry p with look (an lstat
// that also reads a symlink's target) as [canonical] and [statID] do with
// [filepath.EvalSymlinks] and stat(2), but from what look reports only:
// canon is the resolved form of the longest prefix of p that resolves,
// joined with the rest of p, and final is the state of the object p names
// when it exists (kindMissing otherwise). The one difference is in the
// stricter direction: past the kernel's 40 symlinks, where stat(2) gives
// up, it goes on to EvalSymlinks' 255 and may find an identity to match.
func resolveEntry(p string, look func(string) pathState) (canon string, final pathState) {
	vol, orig := components(p)
	sep := string(filepath.Separator)
	root := vol + sep
	join := func(parts []string) string { return root + strings.Join(parts, sep) }
	// pending holds the components still to walk, the next one last; the
	// bottom origLeft of them are p's own, the rest come from symlinks.
	pending := make([]string, 0, len(orig))
	for i := len(orig) - 1; i >= 0; i-- {
		pending = append(pending, orig[i])
	}
	origLeft := len(orig)
	var dest []string                 // the resolved path so far, below root
	good, goodLeft := root, len(orig) // the last prefix of p resolved in full, and how much of p follows it
	fail := func() (string, pathState) {
		rest := orig[len(orig)-goodLeft:]
		return filepath.Join(append([]string{good}, rest...)...), pathState{kind: kindMissing}
	}
	hops := 0
	lastPath, last := "", pathState{}
	for len(pending) > 0 {
		c := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		origLeft = min(origLeft, len(pending))
		switch c {
		case ".":
		case "..":
			// dest has no symlinks left in it, so ".." is lexical, as in
			// EvalSymlinks ("/.." is "/").
			if len(dest) > 0 {
				dest = dest[:len(dest)-1]
			}
		default:
			dest = append(dest, c)
			cur := join(dest)
			st := look(cur)
			lastPath, last = cur, st
			switch {
			case st.kind == kindMissing:
				return fail()
			case st.kind == kindSymlink:
				if hops++; hops > maxEvalLinks {
					return fail()
				}
				if filepath.IsAbs(st.target) {
					dest = dest[:0]
				} else {
					dest = dest[:len(dest)-1]
				}
				pending = pushTarget(pending, st.target)
			case st.kind != kindDir && len(pending) > 0:
				// Not a directory, yet more follows: the prefix that ends
				// here still resolves when nothing but p's own components
				// follow (EvalSymlinks fails only the longer ones).
				if len(pending) == origLeft {
					good, goodLeft = cur, origLeft
				}
				return fail()
			}
		}
		if len(pending) == origLeft {
			good, goodLeft = join(dest), origLeft
		}
	}
	canon = join(dest)
	if lastPath != canon {
		// Resolution ended on ".." or on a link to "/": look at the result.
		last = look(canon)
	}
	return canon, last
}

// pushTarget puts the components of a symlink's target on top of pending,
// the first one last. A trailing separator is kept as a "." so that, as in
// EvalSymlinks and the kernel, a link to "file/" does not resolve.
func pushTarget(pending []string, target string) []string {
	if strings.HasSuffix(target, string(filepath.Separator)) {
		pending = append(pending, ".")
	}
	parts := strings.Split(target, string(filepath.Separator))
	for i := len(parts) - 1; i >= 0; i-- {
		if parts[i] != "" {
			pending = append(pending, parts[i])
		}
	}
	return pending
}

// buildMatcher resolves the entries with lookPath and returns the matcher
// together with every observation it was derived from. ok is false when
// one path looked different at two moments of the same build (something is
// changing it right now): the matcher is then good for this call only.
//
// With pw set, every path is watched (see watch.go) before it is looked at.
func buildMatcher(pw *pathWatch, lists ...[]string) (m *matcher, obs []observation, ok bool) {
	m = &matcher{}
	seen := map[string]int{} // path -> index in obs
	ok = true
	look := func(p string) pathState {
		i, dup := seen[p]
		if !dup && pw != nil {
			pw.add(p, false)
		}
		st := lookPath(p)
		if dup {
			ok = ok && obs[i].state.same(st)
		} else {
			seen[p] = len(obs)
			obs = append(obs, observation{p, st})
		}
		return st
	}
	for _, list := range lists {
		for _, e := range list {
			m.addPath(e, e)
			c, final := resolveEntry(e, look)
			if c != e {
				m.addPath(c, e)
			}
			if final.kind != kindMissing {
				m.ids = append(m.ids, matchID{final.id, e})
			}
		}
	}
	return m, obs, ok
}

// entryCache holds the resolved matcher of one list of entries (see the
// comment at the top of this file). It is safe for concurrent use: a
// snapshot is never changed once stored, and two calls that find it stale
// at once both resolve afresh, the last one's result staying.
type entryCache struct {
	lists [][]string
	snap  atomic.Pointer[entrySnapshot]
}

type entrySnapshot struct {
	m   *matcher
	obs []observation
	pw  *pathWatch // nil: validate by looking again
}

// current reports whether every path the snapshot was resolved from still
// looks the same: by the watch where there is one, else by looking again.
func (s *entrySnapshot) current() bool {
	if s.pw != nil {
		return s.pw.current()
	}
	for _, o := range s.obs {
		if !lookPath(o.path).same(o.state) {
			return false
		}
	}
	return true
}

// matcher returns the entries' matcher as of now.
func (c *entryCache) matcher() *matcher {
	if !cacheEntries {
		return newMatcher(c.lists...)
	}
	if s := c.snap.Load(); s != nil && s.current() {
		return s.m
	}
	pw := beginWatch()
	m, obs, ok := buildMatcher(pw, c.lists...)
	if !pw.usable() {
		pw = nil
	}
	if ok {
		c.snap.Store(&entrySnapshot{m: m, obs: obs, pw: pw})
	} else {
		c.snap.Store(nil)
	}
	return m
}
