//go:build !unix

package sandbox

import "os"

// lockDir keeps the directory open; without flock, liveness is not
// tracked and orphans are only removed by age.
func lockDir(dir string) (*os.File, error) { return os.Open(dir) }

// removeIfUnlocked cannot tell a live session's tmp here: keep everything.
func removeIfUnlocked(string, os.FileInfo) bool { return false }
