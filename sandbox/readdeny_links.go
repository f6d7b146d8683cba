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
// guarded like protected paths (put back after the call, their parents
// pinned), and this process keeps hiding every place an entry has led to,
// for a call that starts while an overlapping one still holds the guard.

// maxSymlinkHops is the kernel's bound on symlinks in one resolution.
const maxSymlinkHops = 40

// linksOnTheWay resolves p as the kernel would and returns the symlinks
// it passes, each by its own path, in the order met. It stops at the
// first component that does not exist.
func linksOnTheWay(p string) []string {
	var links []string
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
			return links
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if hops++; err != nil || hops > maxSymlinkHops {
			return links
		}
		if !slices.Contains(links, next) {
			links = append(links, next)
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		pending = append(strings.Split(target, string(filepath.Separator)), pending...)
	}
	return links
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
// it has led to, place included.
func placesOf(entry, place string) []string {
	readDenyPlaces.Lock()
	defer readDenyPlaces.Unlock()
	places := readDenyPlaces.m[entry]
	if !slices.Contains(places, place) && len(places) < maxPlacesRemembered {
		places = append(places, place)
		readDenyPlaces.m[entry] = places
	}
	if !slices.Contains(places, place) {
		return append(slices.Clone(places), place)
	}
	return slices.Clone(places)
}
