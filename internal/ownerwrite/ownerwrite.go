// Package ownerwrite lets cordon undo what a command did in directories
// the command took the owner's access away from. Not as root, a command
// can chmod away write or read access on directories it made or owns,
// which are the user's and so cordon's: that must not keep what it
// planted there from being looked at, set aside or restored.
package ownerwrite

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/cordonhq/cordon/internal/pathx"
)

// Unlocked runs fn, and once more when it failed for want of permission,
// after giving the owner rwx on the directories from the root down to
// rel, and with deep on those beneath rel too. The modes on the way to rel
// are put back afterwards; beneath it, what fn removed or restored has the
// mode it should. Not as root, a command can take write access away
// from directories it made or owns, which are the user's and so cordon's:
// that must not keep what it planted there.
func Unlocked(r *os.Root, rel string, deep bool, fn func() error) error {
	err := fn()
	if !errors.Is(err, fs.ErrPermission) {
		return err
	}
	undo := grantOwnerWrite(r, rel, deep)
	defer undo()
	return fn()
}

// grantOwnerWrite adds u+rwx to the directories from r down to rel (and,
// with deep, beneath it) that lack it, and returns what puts the modes on
// the way back. A directory of another owner stays as it is: chmod fails.
func grantOwnerWrite(r *os.Root, rel string, deep bool) (undo func()) {
	type changed struct {
		path string
		mode fs.FileMode
	}
	var done []changed
	onTheWay := true
	grant := func(p string) bool {
		fi, err := r.Lstat(p)
		if err != nil || !fi.IsDir() {
			return false
		}
		if perm := fi.Mode().Perm(); perm&0o700 != 0o700 && r.Chmod(p, perm|0o700) == nil && onTheWay {
			done = append(done, changed{p, perm})
		}
		return true
	}
	undo = func() {
		for i := len(done) - 1; i >= 0; i-- {
			if fi, err := r.Lstat(done[i].path); err == nil && fi.IsDir() {
				r.Chmod(done[i].path, done[i].mode)
			}
		}
	}
	grant(".")
	if rel != "." && rel != "" {
		parts := strings.Split(rel, "/")
		for i := range parts {
			if !grant(strings.Join(parts[:i+1], "/")) {
				return undo
			}
		}
	}
	if !deep {
		return undo
	}
	onTheWay = false
	var walk func(dir string)
	walk = func(dir string) {
		d, err := r.Open(dir)
		if err != nil {
			return
		}
		names, _ := d.Readdirnames(-1)
		d.Close()
		for _, name := range names {
			if p := path.Join(dir, name); grant(p) {
				walk(p)
			}
		}
	}
	walk(rel)
	return undo
}

// WithOwnerWrite is Unlocked for dir, a directory beneath root (or root
// itself), and the directories on the way to it.
func WithOwnerWrite(root, dir string, fn func() error) error {
	rel := "."
	if dir != root {
		var ok bool
		if rel, ok = pathx.RelUnder(root, dir); !ok {
			return fn()
		}
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return fn()
	}
	defer r.Close()
	return Unlocked(r, rel, false, fn)
}
