package fsfence

import "github.com/cordonhq/cordon/internal/pathx"

// Validating a cached resolution by looking again (entries.go) costs one
// lstat per path it depends on, some fifty for the default entries: most of
// what a file-tool call costs. Where the kernel can report changes
// (inotify on Linux), a resolution instead registers, before it looks at
// each path, a watch on the directory holding it; validating it is then a
// single non-blocking read of the event queue.
//
// Why that is as strong as looking again: the kernel queues an event in
// the same system call that creates, removes, renames or changes the
// attributes of a name (fsnotify runs inside the VFS operation), so a
// change that is complete before a check starts is in the queue when the
// check drains it. Every path a resolution looked at is a name in a
// directory it watched first, so anything that would make a fresh
// resolution differ — a component created, removed, renamed, replaced by a
// symlink, a link re-pointed (which is a remove and a create), a directory
// on the way moved or deleted — queues an event for that name or that
// directory. A lost event (queue overflow) invalidates everything. What
// inotify does not report are mounts; mounting needs privileges that no
// confined command holds in cordon's mount namespace, which is the
// namespace the fence resolves in.

// Inputs names the paths a result was derived from (see [pathx.Inputs]):
// Paths by how they resolve (every component, and every symlink on the
// way, as [path/filepath.EvalSymlinks] would look at them), Contents also
// by what the files hold, and Trees, directories that were searched, by
// the subdirectories and ".git" entries made, removed or renamed in them.
// The sandbox's policy inputs are the same type: what a policy was derived
// from is what the fence watches.
type Inputs = pathx.Inputs

// InputWatch tells whether the paths of an [Inputs] may have changed since
// it was made. It errs on one side only: Current may report a change that
// made no difference, never miss one.
type InputWatch struct {
	pw *pathWatch // nil: no watcher here, never current
}

// WatchInputs starts watching in, resolving each path now. Whatever was
// derived from in must be derived again after WatchInputs returns (or be
// compared with a second derivation) to be covered by it: a change between
// the first derivation and the watch is otherwise not seen.
func WatchInputs(in Inputs) *InputWatch {
	pw := beginWatch()
	if pw == nil {
		return &InputWatch{}
	}
	look := func(p string) pathState {
		pw.add(p, false)
		return lookPath(p)
	}
	for _, p := range in.Paths {
		resolveEntry(p, look)
	}
	for _, p := range in.Contents {
		canon, _ := resolveEntry(p, look)
		pw.add(canon, true)
	}
	for _, dir := range in.Trees {
		pw.addTree(dir)
	}
	if !pw.usable() {
		return &InputWatch{}
	}
	return &InputWatch{pw: pw}
}

// Current reports whether nothing the watch covers has changed since it
// was made. Without a watcher (not Linux, inotify unavailable) it is
// always false, and callers derive afresh every time.
func (w *InputWatch) Current() bool {
	return w != nil && w.pw != nil && w.pw.current()
}
