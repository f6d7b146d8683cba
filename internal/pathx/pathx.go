// Package pathx is the path arithmetic that the sandbox's layers share:
// whether a path lies beneath another, and a walk of a path's components
// that never follows a link. Decisions about files a command or a tool
// touches are made relative to directory handles (fsfence); these are for
// planning mounts, rules and reports.
package pathx

import (
	"path/filepath"
	"strings"
)

// Within reports whether path is dir or lies beneath it, comparing whole
// components of two cleaned absolute paths ("/ws-evil" is not within
// "/ws").
//
// Building a confined argv asks it a few hundred times (every protected
// path against every root), so it compares the cleaned paths' components
// in place instead of working out filepath.Rel, which was a third of a
// Landlock Confine (BenchmarkConfine). Relative paths keep Rel's answer.
func Within(path, dir string) bool {
	if !filepath.IsAbs(path) || !filepath.IsAbs(dir) {
		return withinRel(path, dir)
	}
	path, dir = cleanAbs(path), cleanAbs(dir)
	switch {
	case dir == string(filepath.Separator):
		return true
	case len(path) == len(dir):
		return path == dir
	}
	return len(path) > len(dir) && path[len(dir)] == filepath.Separator && path[:len(dir)] == dir
}

// cleanAbs is filepath.Clean for an absolute path, without its
// byte-by-byte copy when the path is clean already (as policy paths are).
func cleanAbs(p string) string {
	const sep = string(filepath.Separator)
	if p == sep || !strings.HasSuffix(p, sep) && !strings.HasSuffix(p, sep+".") && !strings.HasSuffix(p, sep+"..") &&
		!strings.Contains(p, sep+sep) && !strings.Contains(p, sep+"."+sep) && !strings.Contains(p, sep+".."+sep) {
		return p
	}
	return filepath.Clean(p)
}

// withinRel is Within for paths that are not both absolute.
func withinRel(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// RelUnder returns p relative to root, slash-separated, when p is beneath it.
func RelUnder(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || !Within(p, root) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
