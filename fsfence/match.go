package fsfence

import (
	"path/filepath"
	"strings"
)

// components splits a cleaned absolute path into its volume ("" outside
// Windows) and its components. Paths are compared only this way, component
// by component, never as string prefixes: "/ws-evil" shares a prefix with
// "/ws" but not a component.
func components(p string) (vol string, parts []string) {
	vol = filepath.VolumeName(p)
	rest := strings.Trim(p[len(vol):], string(filepath.Separator))
	if rest == "" {
		return vol, nil
	}
	return vol, strings.Split(rest, string(filepath.Separator))
}

// relTo returns the components of p below base when p is base or beneath it.
// The comparison is exact: it decides where writes are allowed, so it must
// never match more than the file system would.
func relTo(base, p string) ([]string, bool) {
	bv, bp := components(base)
	pv, pp := components(p)
	if !strings.EqualFold(bv, pv) || len(pp) < len(bp) {
		return nil, false
	}
	for i := range bp {
		if bp[i] != pp[i] {
			return nil, false
		}
	}
	return pp[len(bp):], true
}

// within reports whether the path split into (pv, pp) is the one split
// into (bv, bp) or beneath it, ignoring case. It decides denials, so it may
// match more than the file system would (on a case-insensitive volume
// ".GIT/hooks" is ".git/hooks"), never less.
func within(bv string, bp []string, pv string, pp []string) bool {
	if !strings.EqualFold(bv, pv) || len(pp) < len(bp) {
		return false
	}
	for i := range bp {
		if !strings.EqualFold(bp[i], pp[i]) {
			return false
		}
	}
	return true
}

// matcher holds the entries of one check (read-deny, or protected plus
// read-deny) in every form they can be recognised by: as given, as the file
// system resolves them now, and by identity.
type matcher struct {
	paths []matchPath
	ids   []matchID
	// lineages lives and dies with the matcher: see there.
	lineages lineageCache
}

type matchPath struct {
	vol   string
	parts []string // the path, split once
	entry string
}

type matchID struct {
	id    fileID
	entry string
}

// newMatcher resolves the entries now, with [filepath.EvalSymlinks] and
// stat(2). It serves the platforms where [resolveEntry] does not mirror
// EvalSymlinks (Windows: volumes, junctions, short names); elsewhere the
// fence builds its matchers with [buildMatcher] and keeps them in an
// [entryCache] (see there for why that is as strong as resolving at every
// call).
func newMatcher(lists ...[]string) *matcher {
	m := &matcher{}
	for _, list := range lists {
		for _, e := range list {
			m.addPath(e, e)
			if c := canonical(e); c != e {
				m.addPath(c, e)
			}
			if id, ok := statID(e); ok {
				m.ids = append(m.ids, matchID{id, e})
			}
		}
	}
	return m
}

func (m *matcher) addPath(p, entry string) {
	vol, parts := components(p)
	m.paths = append(m.paths, matchPath{vol, parts, entry})
}

// pathHit returns the entry that p is on or beneath.
func (m *matcher) pathHit(p string) (string, bool) {
	pv, pp := components(p)
	for _, mp := range m.paths {
		if within(mp.vol, mp.parts, pv, pp) {
			return mp.entry, true
		}
	}
	return "", false
}

// idHit returns the entry whose file is one of ids.
func (m *matcher) idHit(ids []fileID) (string, bool) {
	for _, id := range ids {
		for _, mi := range m.ids {
			if id.same(mi.id) {
				return mi.entry, true
			}
		}
	}
	return "", false
}

// canonical resolves the symlinks of the longest existing prefix of p and
// appends the rest, so an entry that does not exist yet under a symlinked
// directory (<root>/.git/hooks with .git a symlink) is still recognised by
// the name the kernel will report.
func canonical(p string) string {
	var rest []string
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}
