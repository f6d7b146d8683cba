package gitrepo

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cordonhq/cordon/internal/pathx"
)

// LinkedWorktreeDirs returns the gitdir and commondir of a linked worktree
// whose .git is a "gitdir: …" file, so that git can commit from it. A .git
// that is a symlink is not followed here; protection refuses it.
//
// The .git file lies in the workspace, where a confined command may write
// it (Landlock cannot keep one file of a writable directory read-only), so
// its word alone would let a command name any directory and have the next
// call make it writable. cordon therefore believes it only for a worktree
// that git itself set up, which nothing inside the sandbox can forge:
//
//   - the gitdir is <commondir>/worktrees/<name>, and its "commondir" file
//     names that commondir;
//   - its "gitdir" file points back at this workspace's .git;
//   - neither lies in the workspace or in writable, the other places the
//     policy can already write (an extra root, the session tmp): a command
//     could have made those.
func LinkedWorktreeDirs(workspace string, writable []string, in *pathx.Inputs) []string {
	if workspace == "" {
		return nil
	}
	dotgit := filepath.Join(workspace, ".git")
	target, ok := gitPointer(dotgit, "gitdir:", in)
	if !ok {
		return nil
	}
	gitdir, err := in.Canonical(relativeTo(workspace, target))
	if err != nil || writableBeforeWorktree(workspace, writable, gitdir, in) {
		return nil
	}
	back, ok := gitPointer(filepath.Join(gitdir, "gitdir"), "", in)
	if !ok || in.CanonicalOrClean(relativeTo(gitdir, back)) != in.CanonicalOrClean(dotgit) {
		return nil
	}
	common, ok := gitPointer(filepath.Join(gitdir, "commondir"), "", in)
	if !ok {
		return nil
	}
	commondir, err := in.Canonical(relativeTo(gitdir, common))
	if err != nil || filepath.Dir(gitdir) != filepath.Join(commondir, "worktrees") {
		return nil
	}
	for _, dir := range []string{gitdir, commondir} {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || writableBeforeWorktree(workspace, writable, dir, in) {
			return nil
		}
	}
	return []string{gitdir, commondir}
}

// writableBeforeWorktree reports whether dir lies in a place the policy
// makes writable without the worktree, canonical paths compared.
func writableBeforeWorktree(workspace string, writable []string, dir string, in *pathx.Inputs) bool {
	for _, root := range append([]string{workspace}, writable...) {
		if root != "" && pathx.Within(dir, in.CanonicalOrClean(root)) {
			return true
		}
	}
	return false
}

// gitPointer reads one of git's one-line pointer files (".git",
// "gitdir", "commondir") as git reads it (read_gitfile_gently): a regular
// file of at most maxGitPointer bytes, its trailing newlines dropped, taken
// as a C string (a NUL ends it), with the prefix and one space after it
// when a prefix is given. A path cordon reads differently from git would
// let a command hide a gitdir from the audit; a symlink or a FIFO (which
// would block the server) is not one.
func gitPointer(path, prefix string, in *pathx.Inputs) (string, bool) {
	in.NoteContent(path)
	before, err := os.Lstat(path)
	if err != nil || !before.Mode().IsRegular() || before.Size() > maxGitPointer {
		return "", false
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if after, err := f.Stat(); err != nil || !os.SameFile(before, after) {
		return "", false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxGitPointer+1))
	if err != nil || len(data) > maxGitPointer {
		return "", false
	}
	s := strings.TrimRight(string(data), "\r\n")
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	if prefix != "" {
		var ok bool
		if s, ok = strings.CutPrefix(s, prefix+" "); !ok {
			return "", false
		}
	}
	return s, s != ""
}

// maxGitPointer is the largest .git file git reads (setup.c).
const maxGitPointer = 1 << 20

func relativeTo(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}
