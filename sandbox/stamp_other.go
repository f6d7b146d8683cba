//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"time"
)

// fileStamp identifies a file's state as lstat sees it: here without the
// change time, so callers that rely on it (the guard's quick compare) also
// compare contents.
func fileStamp(fi os.FileInfo) string {
	return fmt.Sprintf("%v:%d:%d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
}

// fileIdentity cannot name a file apart from its path here.
func fileIdentity(os.FileInfo) string { return "" }

// fileLinks is not known here: one.
func fileLinks(os.FileInfo) uint64 { return 1 }

// changeTime is not known here: callers take the file as changed.
func changeTime(os.FileInfo) (time.Time, bool) { return time.Time{}, false }
