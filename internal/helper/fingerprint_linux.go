package helper

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"maps"
	"slices"

	"golang.org/x/sys/unix"
)

// A warm sandbox's Landlock domain is built once, when its zygote starts,
// and its rules hold inodes, not names: the walk (readgrants_linux.go)
// granted the entries a directory on the way to a read-deny entry held
// then, and a writable root is the directory it was. A directory granted
// then and moved to a read-deny path since (a backup restored over
// ~/.ssh) would stay readable in the warm sandbox; a file made later, a
// workspace made again, would be refused where a cold call, building its
// rules afresh, grants it. So the zygote keeps a fingerprint of what its
// rules were built from and takes no call once it differs: cordon starts
// that call in a fresh sandbox.
//
// The rules depend on the entries of each directory the walk lists — each
// one's name and inode, read here as the walk reads them, so no timestamp
// granularity can hide a rename — and on the inode of every other path
// they name.

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
	h := sha256.New()
	buf := make([]byte, 32<<10)
	for _, dir := range slices.Sorted(maps.Keys(onTheWay)) {
		fmt.Fprintf(h, "%s\x00", dir)
		var st unix.Stat_t
		if err := unix.Lstat(dir, &st); err != nil {
			h.Write([]byte("-\n"))
			continue
		}
		fmt.Fprintf(h, "%d %d %o\n", st.Dev, st.Ino, st.Mode)
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			hashEntries(h, dir, buf)
		}
	}
	// A writable root's entries change with every file made in it: only
	// which directory it is counts.
	for _, p := range append(slices.Concat(cfg.Writable, []string{"/dev"}), landlockDeviceFiles...) {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			fmt.Fprintf(h, "%s -\n", p)
			continue
		}
		fmt.Fprintf(h, "%s %d %d\n", p, st.Dev, st.Ino)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// hashEntries adds dir's entries, each name with its inode, to h in the
// order the directory lists them (the same while it is unchanged); buf is
// room to read them in.
func hashEntries(h hash.Hash, dir string, buf []byte) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintf(h, "unreadable %v\n", err)
		return
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			fmt.Fprintf(h, "unreadable %v\n", err)
			return
		}
		if n <= 0 {
			return
		}
		// struct linux_dirent64: d_ino u64, d_off s64, d_reclen u16,
		// d_type u8, d_name NUL-terminated.
		for rec := buf[:n]; len(rec) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(rec[16:18]))
			if reclen < 19 || reclen > len(rec) {
				fmt.Fprintf(h, "malformed\n")
				return
			}
			name := rec[19:reclen]
			if end := bytes.IndexByte(name, 0); end >= 0 {
				name = name[:end+1] // the padding after it is not the kernel's
			}
			h.Write(rec[0:8])   // inode
			h.Write(rec[18:19]) // type
			h.Write(name)
			rec = rec[reclen:]
		}
	}
}
