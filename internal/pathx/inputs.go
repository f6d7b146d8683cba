package pathx

import (
	"path/filepath"
	"slices"
)

// Inputs are the paths a result was derived from: Paths by how they
// resolve (every component and symlink on the way), Contents also by what
// the files hold (a linked worktree's pointer files, git's configuration),
// and Trees, the directories searched for nested repositories, by their
// subdirectories and .git entries. A result stays what deriving it again
// would return for as long as none of them changes, which lets a caller
// that can watch them (the FS fence's inotify watch) keep it.
//
// Every method takes a nil receiver, which notes nothing.
type Inputs struct {
	Paths, Contents, Trees []string
}

// Canonical is [Canonical], noting p.
func (in *Inputs) Canonical(p string) (string, error) {
	in.NotePath(p)
	return Canonical(p)
}

// CanonicalOrClean is [CanonicalOrClean], noting p.
func (in *Inputs) CanonicalOrClean(p string) string {
	in.NotePath(p)
	return CanonicalOrClean(p)
}

// NotePath notes a path by how it resolves.
func (in *Inputs) NotePath(p string) {
	if in != nil {
		in.Paths = note(in.Paths, p)
	}
}

// NoteTree notes a directory searched for repositories. Trees can number
// thousands, so they are deduplicated once, by Finish, not at each note.
func (in *Inputs) NoteTree(dir string) {
	if in != nil {
		in.Trees = append(in.Trees, dir)
	}
}

// NoteContent notes a file by what it holds.
func (in *Inputs) NoteContent(p string) {
	if in != nil {
		in.Contents = note(in.Contents, p)
	}
}

// Finish puts the inputs in their final, comparable form.
func (in *Inputs) Finish() {
	slices.Sort(in.Trees)
	in.Trees = slices.Compact(in.Trees)
}

// note adds p, made absolute as Canonical makes it, to list.
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
