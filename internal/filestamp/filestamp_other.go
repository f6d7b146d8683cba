//go:build !linux

package filestamp

import (
	"fmt"
	"os"
	"time"
)

// Of identifies a file's state as lstat sees it: here without the
// change time, so callers that rely on it (the guard's quick compare) also
// compare contents.
func Of(fi os.FileInfo) string {
	return fmt.Sprintf("%v:%d:%d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
}

// Identity cannot name a file apart from its path here.
func Identity(os.FileInfo) string { return "" }

// Links is not known here: one.
func Links(os.FileInfo) uint64 { return 1 }

// ChangeTime is not known here: callers take the file as changed.
func ChangeTime(os.FileInfo) (time.Time, bool) { return time.Time{}, false }
