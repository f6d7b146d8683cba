package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cordonhq/cordon/internal/filestamp"
	"github.com/cordonhq/cordon/internal/ownerwrite"
	"github.com/cordonhq/cordon/internal/pathx"
)

// An unfinished rebase, cherry-pick or revert keeps its state in the gitdir
// (rebase-merge, rebase-apply, sequencer), and `git rebase --continue` or
// `git cherry-pick --continue` carries out what that state says: the exec
// lines of a todo, a merge strategy it names (which may be a path into the
// work tree), picks that check files out. The human's `git status` and
// shell prompt show the operation in progress, and the human continues it
// outside any sandbox. So such state that a command made or changed is the
// command's: once the command is over it is set aside whole
// (NAME.cordon-disarmed), as a new repository's hooks are. The human's
// branch is as it was (a rebase moves it only when it finishes); HEAD
// stays where the command left it. State that no command touched, the
// human's own stopped rebase, is left alone: it is fingerprinted when the
// baseline is taken and compared at the end, so neither a change time set
// long ago (a directory moved away and back keeps its files' ctimes) nor
// a clock matters.

// gitStateNames are the directories of a gitdir that hold an unfinished
// operation's state.
var gitStateNames = []string{"rebase-merge", "rebase-apply", "sequencer"}

// gitStatePaths are where the gitdirs beneath root, and the linked
// worktrees of each (<gitdir>/worktrees/NAME, whose work trees may lie
// anywhere), keep such state.
func gitStatePaths(root string, gitdirs []string) []string {
	var dirs []string
	for _, g := range gitdirs {
		if !pathx.Within(g, root) {
			continue
		}
		dirs = append(dirs, g)
		// A command may take read access away from worktrees/ (git in a
		// worktree needs only search access): list it as the owner.
		var entries []os.DirEntry
		wt := filepath.Join(g, "worktrees")
		ownerwrite.WithOwnerWrite(root, wt, func() (err error) {
			entries, err = os.ReadDir(wt)
			return err
		})
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(g, "worktrees", e.Name()))
			}
		}
	}
	var paths []string
	for _, d := range dirs {
		for _, name := range gitStateNames {
			if p := filepath.Join(d, name); !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	return paths
}

// gitStates fingerprints the state that exists at paths.
func gitStates(paths []string) map[string]string {
	states := map[string]string{}
	for _, p := range paths {
		if fp, ok := stateFingerprint(p); ok {
			states[p] = fp
		}
	}
	return states
}

// maxStateEntries bounds a fingerprint's walk; a larger state counts as
// changed.
const maxStateEntries = 4096

// unlooked marks a fingerprint of what could not be looked at whole: it
// equals no other, even one with the same bytes (the baseline may come from
// another cordon process, through the guard store).
const unlooked = "\x00could not be looked at whole: "

// stateFingerprint describes p and everything beneath it without following
// a symlink: each entry's name, type, identity, size and change time, which
// a write, a rename, a new link or a new entry changes (no one can set a
// ctime back). ok is false when nothing is there. What cannot be looked at
// whole (an error, too many entries) gets a fingerprint equal to no other.
func stateFingerprint(p string) (fp string, ok bool) {
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	var b strings.Builder
	n := 0
	unequal := func(why string) { b.WriteString(unlooked + why) }
	filepath.WalkDir(p, func(q string, d os.DirEntry, err error) error {
		if n++; n > maxStateEntries {
			unequal("too many entries")
			return filepath.SkipAll
		}
		fmt.Fprintf(&b, "%s\x00", q)
		if err != nil {
			unequal(err.Error())
			return nil
		}
		if fi, err := d.Info(); err == nil {
			fmt.Fprintf(&b, "%v %s %d", fi.Mode(), filestamp.Identity(fi), fi.Size())
			if ct, ok := filestamp.ChangeTime(fi); ok {
				fmt.Fprintf(&b, " %d", ct.UnixNano())
			}
		}
		b.WriteByte('\n')
		return nil
	})
	return b.String(), true
}

// disarmGitStates sets aside the state beneath root, at paths, that is not
// as before described it. before is nil for state that is the command's
// whatever it holds (a repository the command made).
func (a auditor) disarmGitStates(paths []string, before map[string]string) ([]Change, error) {
	var changes []Change
	var errs []error
	// The paths the baseline saw too: a worktree whose name can no
	// longer be listed is still looked at.
	for p := range before {
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	for p, fp := range gitStates(paths) {
		if was, ok := before[p]; ok && was == fp && !strings.Contains(fp, unlooked) {
			continue
		}
		if a.keeps(p) {
			errs = append(errs, fmt.Errorf("setting aside %s: %w", p, errKeptInPlace))
			continue
		}
		if err := SetAside(a.root, p); err != nil {
			errs = append(errs, fmt.Errorf("setting aside %s: %w", p, err))
			continue
		}
		changes = append(changes, Change{Path: p, What: "disarmed",
			Detail: "an unfinished rebase, cherry-pick or revert that a command left: a human's --continue would carry it out unconfined"})
	}
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return changes, errors.Join(errs...)
}

// repoGitDirs are the gitdirs of a baseline's repositories (see repoKey;
// an entry without a path names none).
func repoGitDirs(keys []string) []string {
	var dirs []string
	for _, k := range keys {
		if _, gitdir, ok := strings.Cut(k, "\x00"); ok {
			dirs = append(dirs, gitdir)
		}
	}
	return dirs
}
