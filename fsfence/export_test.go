package fsfence

import "io/fs"

// SetCommitHook installs a hook that runs after a write's temporary file is
// complete and before it replaces the target, and returns a function that
// removes it. Tests only; not safe to call while writes run.
func SetCommitHook(h func() error) (restore func()) {
	old := testHookBeforeCommit
	testHookBeforeCommit = h
	return func() { testHookBeforeCommit = old }
}

// ForceNamedTemp makes writes use named temporary files, as where O_TMPFILE
// is missing, until restore is called. Tests only.
func ForceNamedTemp() (restore func()) {
	testForceNamedTemp = true
	return func() { testForceNamedTemp = false }
}

// SetWalkHook installs a hook that runs between a write's walk to the
// parent directory and its final checks. Tests only.
func SetWalkHook(h func()) (restore func()) {
	old := testHookAfterWalk
	testHookAfterWalk = h
	return func() { testHookAfterWalk = old }
}

// EntriesCached reports whether the fence holds resolved read and write
// entries from an earlier call. Tests only.
func EntriesCached(f *Fence) (reads, writes bool) {
	return f.reads.snap.Load() != nil, f.writes.snap.Load() != nil
}

// ListAll lists d like [Dir.ReadDir] but with the read-deny names too, as
// [Fence.WalkDir] does. Tests only.
func ListAll(d *Dir) ([]fs.DirEntry, error) { return d.readDir(false) }

// LookAgain makes fences validate cached entries by looking at every path
// again instead of by inotify, until restore is called. Tests only.
func LookAgain() (restore func()) {
	testNoWatcher = true
	return func() { testNoWatcher = false }
}

// EntriesWatched reports whether the fence's cached write entries are
// validated by a watch. Tests only.
func EntriesWatched(f *Fence) bool {
	s := f.writes.snap.Load()
	return s != nil && s.pw != nil
}
