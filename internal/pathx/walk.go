package pathx

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Step is one existing component met by WalkComponents.
type Step struct {
	Path string
	Dir  bool
}

// Walk is how far WalkComponents got.
type Walk struct {
	// Steps are the components that exist, root excluded, in order. A
	// component that is not a directory ends them even before target
	// does: it is what keeps the rest of the path from being made (a
	// linked worktree's .git file).
	Steps []Step
	// Missing is the first component that does not exist, "" when the
	// walk ended otherwise.
	Missing string
	// Link is the symbolic link (or, on Windows, the junction or other
	// reparse point) that ended the walk, "" when none did. Whoever acts
	// on the path refuses it: acting through a link could act on the
	// wrong place.
	Link string
}

// WalkComponents follows target from root one component at a time with
// Lstat, never following a link, and stops at the first component that is
// missing, a link or not a directory. An error is one that Lstat met on an
// existing path.
func WalkComponents(root, target string) (Walk, error) {
	var w Walk
	rel, err := filepath.Rel(root, target)
	if err != nil {
		return w, err
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "" || part == "." {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			w.Missing = cur
			return w, nil
		case err != nil:
			return w, err
		case fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0:
			w.Link = cur
			return w, nil
		}
		w.Steps = append(w.Steps, Step{Path: cur, Dir: fi.IsDir()})
		if !fi.IsDir() {
			return w, nil
		}
	}
	return w, nil
}
