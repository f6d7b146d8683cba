package helper

import (
	"os"
	"path/filepath"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Landlock only grants: it cannot refuse the read of ~/.ssh/id_ed25519 once
// reading / is granted. Its rights are separate, though, so reads are
// granted around the read-deny list instead: listing (READ_DIR) on all of
// /, so every directory stays listable, and reading and executing
// (READ_FILE, EXECUTE) on each entry of each directory on the way to a
// denied path — except the entry that leads there, which is walked into in
// turn. What the walk does not grant stays unreadable: the denied entries,
// and a file made in a directory on the way after the walk (it is not
// among the siblings the rules name). Symlinks are not granted: an access
// through one is decided at its target's place.

var (
	readFileExec = landlock.AccessFSSet(llsyscall.AccessFSReadFile | llsyscall.AccessFSExecute)
	readDir      = landlock.AccessFSSet(llsyscall.AccessFSReadDir)
)

// ReadRules returns the read rules for a sandbox that must not read deny.
func ReadRules(deny []string) []landlock.Rule {
	if len(deny) == 0 {
		return []landlock.Rule{landlock.PathAccess(readFileExec|readDir, "/")}
	}
	denied, onTheWay := waysTo(deny)
	var grant []string
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return // unreadable to cordon: nothing to grant beneath
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case denied[p], e.Type()&os.ModeSymlink != 0:
			case onTheWay[p] && e.IsDir():
				walk(p)
			default:
				grant = append(grant, p)
			}
		}
	}
	walk("/")
	return []landlock.Rule{
		landlock.PathAccess(readDir, "/"),
		landlock.PathAccess(readFileExec, grant...).IgnoreIfMissing(),
	}
}

// waysTo returns the denied paths, and the directories on the way to them
// (the ones the walk lists).
func waysTo(deny []string) (denied, onTheWay map[string]bool) {
	denied, onTheWay = map[string]bool{}, map[string]bool{}
	for _, d := range deny {
		d = filepath.Clean(d)
		denied[d] = true
		for a := filepath.Dir(d); ; a = filepath.Dir(a) {
			onTheWay[a] = true
			if a == filepath.Dir(a) {
				break
			}
		}
	}
	return denied, onTheWay
}
