package tools

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cordonhq/cordon/fsfence"
	ignore "github.com/sabhiram/go-gitignore"
)

// maxIgnoreFile bounds how much of one .gitignore is read.
const maxIgnoreFile = 1 << 20

// ignoreRule is one line of a .gitignore. Each line is compiled on its own
// so that negation works across files as in git: the last rule that
// matches, in the deepest .gitignore, decides.
type ignoreRule struct {
	gi     *ignore.GitIgnore
	negate bool
}

// ignoreLevel is the .gitignore of one directory.
type ignoreLevel struct {
	dir   string // absolute
	rules []ignoreRule
}

// parseIgnore compiles the lines of a .gitignore.
func parseIgnore(data []byte) []ignoreRule {
	var rules []ignoreRule
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.Trim(strings.TrimRight(line, "\r"), " ")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		negate := strings.HasPrefix(line, "!")
		if negate {
			line = line[1:]
		}
		// git anchors a pattern with a slash before its end to the
		// .gitignore's directory; the library only anchors a leading one.
		if body := strings.TrimSuffix(line, "/"); strings.Contains(body, "/") && !strings.HasPrefix(line, "/") && !strings.HasPrefix(line, "**/") {
			line = "/" + line
		}
		rules = append(rules, ignoreRule{gi: ignore.CompileIgnoreLines(line), negate: negate})
	}
	return rules
}

// loadIgnore reads dir/.gitignore through the fence. A missing, unreadable
// or refused file is no rules: ignoring is a convenience, not a control.
func loadIgnore(f *fsfence.Fence, dir string) *ignoreLevel {
	file, err := f.OpenFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return nil
	}
	return readIgnore(file, dir)
}

// readIgnore reads the opened .gitignore of dir and closes it.
func readIgnore(file *os.File, dir string) *ignoreLevel {
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, maxIgnoreFile))
	if err != nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	rules := parseIgnore(data)
	if len(rules) == 0 {
		return nil
	}
	return &ignoreLevel{dir: dir, rules: rules}
}

// ignoreStack holds the .gitignore files of the directories from the
// ignore base down to the one being walked. It is a value: with returns a
// new one and leaves the old as it was, so that the directories of a
// parallel walk each keep their own.
type ignoreStack struct {
	levels []*ignoreLevel
}

// with is the stack with a directory's .gitignore added, if it has rules.
func (s ignoreStack) with(l *ignoreLevel) ignoreStack {
	if l == nil {
		return s
	}
	return ignoreStack{levels: append(slices.Clip(s.levels), l)}
}

// ignored reports whether the levels in force ignore path.
func (s ignoreStack) ignored(path string, isDir bool) bool {
	ignored := false
	for _, l := range s.levels {
		rel, ok := relBelow(l.dir, path)
		if !ok {
			continue
		}
		if isDir {
			rel += "/" // so that "build/" rules match the directory only
		}
		for _, r := range l.rules {
			if r.gi.MatchesPath(rel) {
				ignored = !r.negate
			}
		}
	}
	return ignored
}

// relBelow is path relative to dir, slash-separated, and false when they
// are the same; both are clean. It is [filepath.Rel] without its work in
// the case the walk always has: dir is an ancestor of path.
func relBelow(dir, path string) (string, bool) {
	if rest, ok := strings.CutPrefix(path, dir); ok {
		switch {
		case strings.HasSuffix(dir, string(filepath.Separator)) && rest != "":
			return filepath.ToSlash(rest), true
		case len(rest) > 1 && rest[0] == filepath.Separator:
			return filepath.ToSlash(rest[1:]), true
		}
	}
	rel, err := filepath.Rel(dir, path) // as before the fast path
	if err != nil || rel == "." {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
