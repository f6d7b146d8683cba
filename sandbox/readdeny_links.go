package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// A read-deny entry may be reached through a symlink (~/.ssh ->
// dotfiles/ssh, a common dotfiles layout). The list holds where it leads,
// which is what a backend hides. But the symlink itself lies in the
// writable roots when they contain it: a command that points it elsewhere
// would make the next call's list hide the new place and leave the
// secret, still at the old one, readable. So the symlinks on the way are
// guarded like protected paths (put back after the call), the directories
// on the way pinned, and this process keeps hiding every place an entry
// has led to, for a call that starts while an overlapping one still holds
// the guard.

// maxSymlinkHops is the kernel's bound on symlinks in one resolution.
const maxSymlinkHops = 40

// linksOnTheWay resolves p as the kernel would and returns the symlinks
// it passes, each by its own path, in the order met, and the directories
// it passes through: a `..` in a symlink's target steps out of one that is
// no ancestor of where p leads (tok -> sub/../real), and a command that
// replaced it would change where p leads. It stops at the first component
// that does not exist.
func linksOnTheWay(p string) (links, dirs []string) {
	pending := strings.Split(filepath.Clean(p), string(filepath.Separator))
	cur := string(filepath.Separator)
	for hops := 0; len(pending) > 0; {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			return links, dirs
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if fi.IsDir() && !slices.Contains(dirs, next) {
				dirs = append(dirs, next)
			}
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if hops++; err != nil || hops > maxSymlinkHops {
			return links, dirs
		}
		if !slices.Contains(links, next) {
			links = append(links, next)
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		pending = append(strings.Split(target, string(filepath.Separator)), pending...)
	}
	return links, dirs
}

// maxPlacesRemembered bounds the places kept per entry; the first ones
// stay, which are what the entry led to before any command could move
// its symlinks.
const maxPlacesRemembered = 64

// readDenyPlaces remembers, for this process, where each configured
// read-deny entry has led (by its path as configured).
var readDenyPlaces = struct {
	sync.Mutex
	m map[string][]string
}{m: map[string][]string{}}

// placesOf records that entry leads to place now, and returns every place
// it has led to, place included. A place that holds a writable root is
// not remembered: a command that pointed ~/.ssh at the workspace would
// otherwise have it hidden for the rest of the process.
func placesOf(entry, place string, roots []string) []string {
	readDenyPlaces.Lock()
	defer readDenyPlaces.Unlock()
	places := readDenyPlaces.m[entry]
	holdsRoot := slices.ContainsFunc(roots, func(r string) bool { return within(r, place) })
	if !slices.Contains(places, place) && len(places) < maxPlacesRemembered && !holdsRoot {
		places = append(places, place)
		readDenyPlaces.m[entry] = places
	}
	if !slices.Contains(places, place) {
		return append(slices.Clone(places), place)
	}
	return slices.Clone(places)
}
