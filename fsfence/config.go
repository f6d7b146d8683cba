package fsfence

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Config is what the fence enforces. The caller (the execution policy)
// computes it; every entry must be an absolute path. The fence cleans and
// deduplicates the entries but does not otherwise trust them: writable roots
// must be canonical (a root reached through a symlink is refused at use), and
// protected and read-deny entries are also compared in their
// symlink-resolved form and by device and inode at every call.
type Config struct {
	// WritableRoots are the directories beneath which writes are allowed.
	// A root that does not exist matches nothing until it exists.
	WritableRoots []string
	// Protected are files or directory subtrees that must never be written,
	// created, renamed over or deleted, even inside a writable root.
	Protected []string
	// ReadDeny are files or directory subtrees that must never be read or
	// listed. They are never writable either.
	ReadDeny []string
	// ProtectedNames are names that are protected wherever they stand as
	// a component of a path beneath a writable root (".git": wherever a
	// repository is, or would be made). A slash-separated name
	// (".hg/hgrc") is protected wherever its components follow each
	// other in a path. Compared ignoring case.
	ProtectedNames []string
	// ProtectedFileNames are names that no write may give the last
	// component of its path, compared exactly ("HEAD": git takes a
	// directory with a HEAD, objects and refs for a repository).
	ProtectedFileNames []string
}

// normalize validates and cleans every entry. It returns a copy so that the
// fence cannot be changed through the caller's slices.
func (c Config) normalize() (Config, error) {
	var out Config
	var err error
	if out.WritableRoots, err = cleanEntries("writable root", c.WritableRoots); err != nil {
		return Config{}, err
	}
	if out.Protected, err = cleanEntries("protected path", c.Protected); err != nil {
		return Config{}, err
	}
	if out.ReadDeny, err = cleanEntries("read-deny path", c.ReadDeny); err != nil {
		return Config{}, err
	}
	if out.ProtectedNames, err = cleanNames("protected name", c.ProtectedNames, true); err != nil {
		return Config{}, err
	}
	if out.ProtectedFileNames, err = cleanNames("protected file name", c.ProtectedFileNames, false); err != nil {
		return Config{}, err
	}
	// Longest root first: a path inside nested roots maps onto the innermost
	// existing one. Ties cannot happen after deduplication.
	slices.SortStableFunc(out.WritableRoots, func(a, b string) int { return len(b) - len(a) })
	return out, nil
}

// cleanNames validates names, each one path component (or, with
// multi, slash-separated components), without duplicates.
func cleanNames(kind string, in []string, multi bool) ([]string, error) {
	var out []string
	for _, n := range in {
		parts := []string{n}
		if multi {
			parts = strings.Split(n, "/")
		}
		for _, c := range parts {
			if c == "" || c == "." || c == ".." || strings.ContainsAny(c, "/\\\x00") {
				return nil, fmt.Errorf("fsfence: %s %q: %w: a name is path components", kind, n, ErrInvalidPath)
			}
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

func cleanEntries(kind string, in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	for _, p := range in {
		c, err := cleanAbs(p)
		if err != nil {
			return nil, fmt.Errorf("fsfence: %s %q: %w", kind, p, err)
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// cleanAbs validates a caller's path and cleans it lexically. Relative paths
// are refused rather than joined with the process's working directory: the
// server's cwd is not the workspace, and guessing a base is how a fence
// ends up checking one path and opening another.
func cleanAbs(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("%w: empty path", ErrInvalidPath)
	case strings.IndexByte(p, 0) >= 0:
		return "", fmt.Errorf("%w: path contains a NUL byte", ErrInvalidPath)
	case !filepath.IsAbs(p):
		return "", fmt.Errorf("%w: path must be absolute (join it with the workspace root first)", ErrInvalidPath)
	}
	return filepath.Clean(p), nil
}
