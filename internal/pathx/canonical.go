package pathx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Canonical returns p absolute, cleaned and with every symlink resolved.
// Every consumer of a path list (backends, the FS fence, status) goes
// through it, so they compare like with like. A path that does not exist
// is an error wrapping fs.ErrNotExist.
func Canonical(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// CanonicalOrClean resolves p when it exists and otherwise returns it
// absolute and cleaned, resolving the longest existing prefix so that a
// missing child of a symlinked parent still names the real location.
func CanonicalOrClean(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if c, err := filepath.EvalSymlinks(abs); err == nil {
		return c
	}
	dir, rest := abs, ""
	for dir != filepath.Dir(dir) {
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = filepath.Dir(dir)
		if c, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(c, rest)
		}
	}
	return abs
}

// WithinAny reports whether path lies in one of roots.
func WithinAny(path string, roots []string) bool {
	return slices.ContainsFunc(roots, func(r string) bool { return Within(path, r) })
}

// ExistsNoFollow reports whether p exists, without following a final
// symlink. A path that cannot be looked at counts as existing.
func ExistsNoFollow(p string) bool {
	_, err := os.Lstat(p)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}
