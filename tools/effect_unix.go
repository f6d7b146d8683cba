//go:build unix

package tools

import (
	"fmt"
	"io/fs"
	"syscall"
)

// fileID is the device and inode of a file: another file put in its place
// (a rename over it) has another.
func fileID(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
	}
	return ""
}
