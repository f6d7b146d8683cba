package sandbox

import (
	"path/filepath"
	"slices"
)

// PolicyInputs are the paths a policy was derived from: Paths by how they
// resolve (every component and symlink on the way), Contents also by what
// the files hold (a linked worktree's pointer files, git's configuration),
// and Trees, the directories searched for nested repositories, by their
// subdirectories and .git entries. A policy stays what Resolve would
// return again for as long as none of them changes, which lets a caller
// that can watch them (the tools, through the FS fence's inotify watch)
// keep it instead of resolving at every call.
type PolicyInputs struct {
	Paths, Contents, Trees []string
}

// canonical is canonicalPath, noting p. A nil receiver only resolves.
func (in *PolicyInputs) canonical(p string) (string, error) {
	in.path(p)
	return canonicalPath(p)
}

// canonicalOrClean is canonicalOrClean, noting p.
func (in *PolicyInputs) canonicalOrClean(p string) string {
	in.path(p)
	return canonicalOrClean(p)
}

func (in *PolicyInputs) path(p string) {
	if in != nil {
		in.Paths = note(in.Paths, p)
	}
}

// tree notes a directory searched for repositories. Trees can number
// thousands, so they are deduplicated once, by finish, not at each note.
func (in *PolicyInputs) tree(dir string) {
	if in != nil {
		in.Trees = append(in.Trees, dir)
	}
}

// finish puts the inputs in their final, comparable form.
func (in *PolicyInputs) finish() {
	slices.Sort(in.Trees)
	in.Trees = slices.Compact(in.Trees)
}

func (in *PolicyInputs) content(p string) {
	if in != nil {
		in.Contents = note(in.Contents, p)
	}
}

// note adds p, made absolute as canonicalPath makes it, to list.
func note(list []string, p string) []string {
	if p == "" {
		return list
	}
	abs, err := filepath.Abs(p)
	if err != nil || slices.Contains(list, abs) {
		return list
	}
	return append(list, abs)
}
