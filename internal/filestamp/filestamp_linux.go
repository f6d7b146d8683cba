// Package filestamp names a file's state and identity as lstat sees them, for
// the caches and guards that must notice any change to a file. The change
// time is set by the kernel on every write, chmod, link or rename and
// cannot be set back from user space.
package filestamp

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// Of identifies a file's state as lstat sees it. The change time is
// set by the kernel on every write, chmod, link or rename and cannot be
// set back from user space, so an equal stamp means an unchanged file.
func Of(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprintf("%v:%d:%d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
	}
	return fmt.Sprintf("%d:%d:%o:%d:%d:%d.%d:%d.%d", st.Dev, st.Ino, st.Mode, st.Nlink, st.Size,
		st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}

// Identity names the file itself, whatever its path: device and inode.
func Identity(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	}
	return ""
}

// Links is the file's hard-link count.
func Links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// ChangeTime is when the file last changed in any way (its ctime), which
// no one can set back; ok is false where it is not known.
func ChangeTime(fi os.FileInfo) (t time.Time, ok bool) {
	st, isStat := fi.Sys().(*syscall.Stat_t)
	if !isStat {
		return time.Time{}, false
	}
	return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)), true //nolint:unconvert // 32-bit ports
}
