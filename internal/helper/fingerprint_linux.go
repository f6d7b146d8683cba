package helper

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// A warm sandbox's Landlock domain is built once, when its zygote starts,
// and its rules hold inodes, not names: the walk (readgrants_linux.go)
// granted the entries a directory on the way to a read-deny entry held
// then, and a writable root is the directory it was. A file saved by
// rename beside ~/.ssh (a new inode), a workspace made again, would be
// refused in the warm sandbox where a cold call, building its rules
// afresh, grants it. So the zygote keeps a fingerprint of what its rules
// were built from and takes no call once it differs: cordon starts that
// call in a fresh sandbox.
//
// The rules depend on the entries of each directory the walk lists —
// making, removing or renaming one changes the directory's ctime, which
// the kernel keeps fine-grained once it has been read — and on the inode
// of every other path they name.

// landlockDeviceFiles are the device files every ruleset grants.
var landlockDeviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

// rulesFingerprint describes what cfg's Landlock rules are built from; it
// is "" without Landlock.
func rulesFingerprint(cfg Config) string {
	if cfg.LandlockABI == 0 {
		return ""
	}
	_, onTheWay := waysTo(cfg.DenyRead)
	onTheWay["/"] = true
	var b strings.Builder
	for _, dir := range slices.Sorted(maps.Keys(onTheWay)) {
		var st unix.Stat_t
		if err := unix.Lstat(dir, &st); err != nil {
			fmt.Fprintf(&b, "%s -\n", dir)
			continue
		}
		fmt.Fprintf(&b, "%s %d %d %o %d.%d\n", dir, st.Dev, st.Ino, st.Mode, st.Ctim.Sec, st.Ctim.Nsec)
	}
	// A writable root's own ctime changes with every file made in it:
	// only which directory it is counts.
	for _, p := range append(slices.Concat(cfg.Writable, []string{"/dev"}), landlockDeviceFiles...) {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			fmt.Fprintf(&b, "%s -\n", p)
			continue
		}
		fmt.Fprintf(&b, "%s %d %d\n", p, st.Dev, st.Ino)
	}
	return b.String()
}
