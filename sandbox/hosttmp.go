package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// hostTmp is the host's /tmp: under bwrap a command sees the session's
// private directory there instead.
const hostTmp = "/tmp"

// ProgramTrees are the directories under the host's /tmp that a command
// line the human typed (`cordon exec`, `cordon wrap`) runs from: its
// program and every argument naming an existing file there, with what
// they load — the whole node_modules of a Node package, the whole virtual
// environment of a Python program, else the file's own directory. Both the
// path as given and where its symlinks lead count. They are made visible
// read-only over the private /tmp, and nothing else of the host's /tmp is.
//
// Only human-typed command lines get this: a model's command naming a host
// /tmp path must not be a way to read another session's files.
func ProgramTrees(argv []string, dir string) []string {
	var trees []string
	for i, arg := range argv {
		path := arg
		if i == 0 && !strings.Contains(arg, "/") {
			found, err := exec.LookPath(arg)
			if err != nil {
				continue
			}
			path = found
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		path = filepath.Clean(path)
		fi, err := os.Stat(path)
		if err != nil || fi.IsDir() {
			continue
		}
		candidates := []string{path}
		if real, err := filepath.EvalSymlinks(path); err == nil {
			candidates = append(candidates, real)
		}
		for _, c := range candidates {
			if t := programTree(c); t != "" {
				trees = append(trees, t)
			}
		}
	}
	slices.Sort(trees)
	return outermost(slices.Compact(trees))
}

// programTree is what a program at path loads from, when path lies under
// the host's /tmp: "" elsewhere.
func programTree(path string) string {
	if !within(path, hostTmp) || path == hostTmp {
		return ""
	}
	rel := strings.Split(strings.TrimPrefix(path, hostTmp+"/"), "/")
	// A Node package resolves its requires up to the outermost
	// node_modules: the directory that holds it is the project.
	if i := slices.Index(rel, "node_modules"); i >= 0 {
		return filepath.Join(append([]string{hostTmp}, rel[:i+1]...)...)
	}
	// A Python virtual environment loads from its own lib/.
	for d := filepath.Dir(path); d != hostTmp && within(d, hostTmp); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "pyvenv.cfg")); err == nil {
			return d
		}
	}
	if filepath.Dir(path) == hostTmp {
		// A file directly in /tmp: only it, not its neighbours.
		return path
	}
	return filepath.Dir(path)
}
