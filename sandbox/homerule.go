package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cordonhq/cordon/internal/pathx"
)

// homeRule refuses a confined policy whose writable roots contain the home
// directory: the home itself, "/", or any directory above the home. The
// home is where every program the human runs finds its start-up code
// (shells, language toolchains, debuggers, pagers, editors, agents), and
// no list of protected names can keep up with that set; so instead of
// listing it, no writable root may hold it. A directory inside the home (a
// project, ~/.cache/go-build) is fine.
//
// Roots are compared with the home's ancestors by identity (device and
// inode), as well as by path: a bind mount or a second name of /home is
// the same directory, whatever its path says. Both the home as given and
// the home with its symlinks resolved count, since whoever can write the
// directory holding a symlinked home can point the home elsewhere.
func homeRule(p ExecutionPolicy, home string) error {
	if p.IsDanger() {
		return nil
	}
	above := homeAndAncestors(home)
	for _, r := range p.WritableRoots {
		fi, statErr := os.Stat(r)
		for _, a := range above {
			if r == a.path || statErr == nil && a.info != nil && os.SameFile(fi, a.info) {
				return homeRootError(p, r, home)
			}
		}
	}
	// A mount inside a root that presents the home, or a directory above
	// it (a bind mount of ~ into the workspace), makes the home writable
	// through it. A symlink to the home needs nothing: the sandbox judges
	// the file it leads to, outside every root.
	for _, m := range mountPointsWithin(p.WritableRoots) {
		fi, err := os.Stat(m)
		if err != nil {
			continue
		}
		for _, a := range above {
			if a.info != nil && os.SameFile(fi, a.info) {
				return &UnavailableError{Reason: fmt.Sprintf(
					"%s is a mount inside a writable root that presents your home directory %s (or a directory above it): a command could write the home through it. Unmount it, or open the agent in a directory that holds no such mount",
					m, home)}
			}
		}
	}
	return nil
}

type ancestor struct {
	path string
	info os.FileInfo // nil when it cannot be stat'ed
}

// homeAndAncestors lists "/", and the home and each directory above it,
// both as given and resolved.
func homeAndAncestors(home string) []ancestor {
	var paths []string
	add := func(p string) {
		for dir := p; ; dir = filepath.Dir(dir) {
			if !slices.Contains(paths, dir) {
				paths = append(paths, dir)
			}
			if dir == filepath.Dir(dir) {
				return
			}
		}
	}
	add(string(filepath.Separator))
	if home != "" {
		if abs, err := filepath.Abs(home); err == nil {
			add(abs)
		}
		add(pathx.CanonicalOrClean(home))
	}
	out := make([]ancestor, 0, len(paths))
	for _, p := range paths {
		fi, _ := os.Stat(p)
		out = append(out, ancestor{path: p, info: fi})
	}
	return out
}

// homeRootError names the root, the setting it came from, and the fix.
func homeRootError(p ExecutionPolicy, root, home string) error {
	what := "is your home directory"
	switch {
	case root == string(filepath.Separator):
		what = "is / and contains your home directory"
	case home != "" && root != pathx.CanonicalOrClean(home):
		what = "contains your home directory " + home
	}
	return &UnavailableError{Reason: fmt.Sprintf(
		"the writable root %s (%s) %s. cordon refuses to confine a command that may write the home: every tool you run (your shell, language toolchains, editors, agents) reads its start-up code from there, and no list of protected files can cover them all. Open the agent in a project directory (or pass --workspace ~/src/PROJECT), and name any other one directory a command needs with extra_write_allow (or wrap --writable), such as ~/.cache/go-build",
		root, rootOrigin(p, root), what)}
}

// rootOrigin says which setting made root writable.
func rootOrigin(p ExecutionPolicy, root string) string {
	same := func(dir string) bool { return dir != "" && pathx.CanonicalOrClean(dir) == root }
	switch {
	case same(p.WorkspaceRoot):
		return "the workspace"
	case same(p.OwnDir):
		return "the wrap class directory"
	case same(p.TmpDir):
		return "the session tmp"
	case slices.ContainsFunc(p.ExtraWriteAllow, same):
		return "extra_write_allow or wrap --writable"
	}
	return "a linked git worktree's gitdir"
}

// mountPointsWithin lists the mount points strictly beneath roots, from
// this process's mount table: a bind mount of the home (or of a directory
// above it) inside a writable root makes the home writable through it,
// whatever the root's own identity says. An unreadable table (on Linux
// without /proc; on other systems, which have none) lists none.
func mountPointsWithin(roots []string) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	return mountPointsIn(string(b), roots)
}

// mountPointsIn reads mountinfo's fifth field, the mount point, with its
// octal escapes (\040 for a blank) undone.
func mountPointsIn(mountinfo string, roots []string) []string {
	var out []string
	for _, line := range strings.Split(mountinfo, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		for _, r := range roots {
			if mp != r && within(mp, r) {
				out = append(out, mp)
				break
			}
		}
	}
	return out
}

func unescapeMountinfo(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
