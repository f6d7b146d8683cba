package sandbox

import (
	"fmt"
	"path/filepath"
)

// RelativePathEntries returns the entries of a PATH value that are not
// absolute: "./node_modules/.bin", "bin", and "" for an empty one (a
// leading, trailing or doubled separator), which shells read as ".".
// The human's shell looks such an entry up from whatever directory they
// are in, so a program that a confined command writes in the workspace
// there (node_modules/.bin/git) runs as the human's own command the next
// time they type its name in the workspace. No sandbox can stop that
// write: the workspace is writable. cordon warns about each one instead.
func RelativePathEntries(path string) []string {
	var out []string
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			out = append(out, dir)
		}
	}
	return out
}

// PathWarnings is a warning per relative entry of PATH, naming it.
func PathWarnings(path string) []string {
	var out []string
	for _, dir := range RelativePathEntries(path) {
		name := fmt.Sprintf("the relative entry %q", dir)
		if dir == "" {
			name = `an empty entry (a leading, trailing or doubled ":", which shells read as the current directory)`
		}
		out = append(out, fmt.Sprintf(
			"PATH holds %s: your shell looks it up from whatever directory you are in, so a program that a command writes there inside the workspace (%s) runs as your own command the next time you type its name in the workspace. Keep only absolute directories in PATH (use npx, or \"$PWD/node_modules/.bin\")",
			name, filepath.Join(orDot(dir), "git")))
	}
	return out
}

func orDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}
