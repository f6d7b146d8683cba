package tools

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// GlobInput are the glob tool's arguments.
type GlobInput struct {
	Pattern string `json:"pattern" jsonschema:"Glob pattern; ** matches any number of directories."`
	Path    string `json:"path,omitempty" jsonschema:"Directory to search. Default: the workspace."`
}

// GlobOutput is the glob tool's structuredContent.
type GlobOutput struct {
	Matches   []string `json:"matches"`
	Truncated bool     `json:"truncated"`
	Total     int      `json:"total" jsonschema:"how many files matched; more than len(matches) when truncated"`
}

// MaxGlobMatches is how many paths glob returns, newest first.
const MaxGlobMatches = 1000

// Glob finds the files under a directory whose slash-separated path
// relative to it matches a doublestar pattern (`**/*.go`), newest first.
// It skips .git and what .gitignore ignores, and never lists or shows what
// the fence refuses. Directories themselves are not matches.
func (tb *Toolbox) Glob(ctx context.Context, call Call, in GlobInput) (*Result, *ToolError) {
	call = tb.pin(call)
	pattern := in.Pattern
	if strings.IndexByte(pattern, 0) >= 0 {
		return nil, invalid("pattern contains a NUL byte")
	}
	if pattern == "" {
		return nil, invalid("pattern is empty: give a glob such as **/*.go")
	}
	if !doublestar.ValidatePattern(pattern) {
		return nil, invalid("pattern %q is not a valid glob: check its brackets and braces (syntax: * ? [abc] {a,b} and ** for any number of directories)", pattern)
	}
	if path.IsAbs(pattern) && in.Path != "" {
		return nil, invalid("pattern %q is absolute: give either an absolute pattern or a path with a relative pattern", pattern)
	}
	pol, dir, f, terr := tb.reading(call, in.Path, true)
	if terr != nil {
		return nil, terr
	}
	if !path.IsAbs(pattern) {
		fi, err := f.Stat(dir)
		if err != nil {
			return nil, fenceError(NameGlob, pol, dir, err)
		}
		if !fi.IsDir() {
			return nil, invalid("%s is a file, not a directory: give the directory to search", dir)
		}
	}
	// Walk only below the pattern's literal prefix ("src/" of
	// "src/**/*.go"): the rest of the tree cannot match.
	base, rest := doublestar.SplitPattern(strings.TrimPrefix(pattern, "./"))
	root := filepath.Join(dir, filepath.FromSlash(base))
	if path.IsAbs(pattern) {
		root = filepath.Clean(filepath.FromSlash(base))
	}
	match := globMatcher(rest)
	var mu sync.Mutex
	var found []stamped
	// The walk runs on every CPU, in no order: the matches are sorted
	// by time below.
	err := newTreeWalk(f, pol, root).runParallel(ctx, runtime.NumCPU(), func(p string, d fs.DirEntry, dir *walkDir) error {
		rel, ok := relBelow(root, p)
		if !ok || !match(rel, d.Name()) {
			return nil
		}
		// The match's own modification time (a symlink's is its own),
		// looked at beneath its checked directory; what the fence refuses
		// (a read-deny file known by identity) is dropped.
		var fi fs.FileInfo
		var err error
		if dir != nil {
			fi, err = dir.Lstat(d.Name())
		} else {
			fi, err = f.Lstat(p)
		}
		if err == nil {
			mu.Lock()
			found = append(found, stamped{path: p, mod: fi.ModTime()})
			mu.Unlock()
		}
		return nil
	})
	switch {
	case ctx.Err() != nil:
		return nil, errorf(CodeTimeout, "glob was cancelled")
	case err != nil && root != dir && isNotExist(err):
		// The pattern's literal prefix does not exist: no matches.
	case err != nil:
		return nil, walkRootError(NameGlob, pol, root, err)
	}
	matches := newestFirst(found)
	total := len(matches)
	truncated := total > MaxGlobMatches
	if truncated {
		matches = matches[:MaxGlobMatches]
	}
	out := make([]string, len(matches))
	for i, m := range matches {
		out[i] = displayPath(pol, m)
	}
	var b strings.Builder
	for _, m := range out {
		b.WriteString(m + "\n")
	}
	if total == 0 {
		fmt.Fprintf(&b, "No files match %s under %s (.git and .gitignored paths are skipped).\n", in.Pattern, displayPath(pol, dir))
	}
	if truncated {
		fmt.Fprintf(&b, "[showing the %d newest of %d matches: narrow the pattern or the path]\n", MaxGlobMatches, total)
	}
	return &Result{Text: b.String(), Structured: structured(GlobOutput{Matches: out, Truncated: truncated, Total: total})}, nil
}

// globMatcher returns whether a file matches pattern, given its path
// relative to the walk's root (slash-separated) and its name. A pattern
// "**/" followed by one without a slash or "**" (the common **/*.go)
// matches exactly the files whose name matches the rest: it is matched
// against the name alone.
func globMatcher(pattern string) func(rel, name string) bool {
	if tail, ok := strings.CutPrefix(pattern, "**/"); ok && !strings.Contains(tail, "/") && !strings.Contains(tail, "**") {
		return func(_, name string) bool { return doublestar.MatchUnvalidated(tail, name) }
	}
	return func(rel, _ string) bool { return doublestar.MatchUnvalidated(pattern, rel) }
}

// stamped is a match and its modification time.
type stamped struct {
	path string
	mod  time.Time
}

// newestFirst sorts the matches by modification time, newest first, then
// by path.
func newestFirst(all []stamped) []string {
	slices.SortStableFunc(all, func(a, b stamped) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.path
	}
	return out
}
