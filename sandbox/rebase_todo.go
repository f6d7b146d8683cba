package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// An interactive rebase keeps what it has left to do in
// <gitdir>/rebase-merge/git-rebase-todo, and `git rebase --continue` runs
// the todo's exec lines. A command can leave a rebase of its own stopped
// (at a `break`, a conflict, an `edit`) or write the todo of one, and the
// human, whose `git status` and shell prompt then say that a rebase is in
// progress, continues it outside any sandbox. So once a command is over,
// the exec lines of a todo that it made or changed are commented out (the
// rebase goes on without them; the todo as it was is kept beside it), and
// a rebase-merge or todo that git would not have made (a symlink, a hard
// link, anything but a plain file or directory, whose content could change
// later without the todo changing) is set aside. A todo that no command
// touched, a rebase the human stopped, is left as it is.

// disarmRebase disarms the rebase in progress in gitdir, beneath root,
// when a command made or changed its todo at or after since.
func disarmRebase(root, gitdir string, since time.Time) ([]Change, error) {
	dir := filepath.Join(gitdir, "rebase-merge")
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case !fi.IsDir():
		return []Change{{Path: dir, What: "disarmed", Detail: "a rebase-merge that is not a directory"}}, setAside(root, dir)
	}
	todo := filepath.Join(dir, "git-rebase-todo")
	fi, err = os.Lstat(todo)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular() || fileLinks(fi) > 1 || fi.Size() > maxRebaseTodo:
		return []Change{{Path: todo, What: "disarmed", Detail: "a rebase todo that git did not write"}}, setAside(root, todo)
	}
	if ct, ok := changeTime(fi); ok && ct.Before(since.Add(-changeTimeSlack)) {
		return nil, nil
	}
	var disarmed []byte
	n := 0
	err = inRoot(root, todo, func(r *os.Root, rel string) error {
		f, err := r.OpenFile(rel, os.O_RDONLY|oNoFollow|oNonBlock, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxRebaseTodo))
		disarmed, n = commentOutExecs(data)
		return err
	})
	if err != nil || n == 0 {
		return nil, err
	}
	if err := keepCopy(root, todo); err != nil {
		return nil, err
	}
	err = inRoot(root, todo, func(r *os.Root, rel string) error {
		return unlocked(r, path.Dir(rel), false, func() error { return replaceInRoot(r, rel, disarmed) })
	})
	return []Change{{Path: todo, What: "disarmed", Detail: fmt.Sprintf("%d exec line(s) of a rebase in progress commented out", n)}}, err
}

// maxRebaseTodo bounds what is read of a todo (git's own are a line per
// commit); a larger one is set aside whole.
const maxRebaseTodo = 16 << 20

// execPrefix marks the lines that cordon commented out.
const execPrefix = "# cordon: a command wrote this exec line, which would run outside the sandbox: "

// commentOutExecs comments out every exec line of a rebase todo, as git
// parses them (the command after leading blanks, "exec" or "x", then a
// blank), and says how many there were.
func commentOutExecs(todo []byte) ([]byte, int) {
	var out bytes.Buffer
	n := 0
	for line := range bytes.Lines(todo) {
		cmd := bytes.TrimLeft(line, " \t")
		if i := bytes.IndexAny(cmd, " \t"); i > 0 {
			cmd = cmd[:i]
		}
		if w := strings.TrimRight(string(cmd), "\r\n"); w == "exec" || w == "x" {
			out.WriteString(execPrefix)
			n++
		}
		out.Write(line)
	}
	return out.Bytes(), n
}

// replaceInRoot writes data to rel through a new file renamed over it, so
// that a reader sees the old todo or the new one, never half of it.
func replaceInRoot(r *os.Root, rel string, data []byte) error {
	tmp := rel + ".cordon-new"
	if err := r.RemoveAll(tmp); err != nil {
		return err
	}
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		r.Remove(tmp)
		return err
	}
	return r.Rename(tmp, rel)
}
