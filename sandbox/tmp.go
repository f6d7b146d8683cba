package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// SessionTmp is a session's private tmp directory under <state-dir>/tmp,
// bound at /tmp inside the sandbox.
type SessionTmp struct {
	Path string
	lock *os.File
}

// sessionTmpDir holds every session's tmp, beneath the state directory.
const sessionTmpDir = "tmp"

// NewSessionTmp creates a fresh random directory and holds a lifetime lock
// on the directory itself, so orphan clean-up can tell a live session's
// tmp from a dead one's.
func NewSessionTmp(stateDir string) (*SessionTmp, error) {
	base := filepath.Join(stateDir, sessionTmpDir)
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", base, err)
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	dir := filepath.Join(base, hex.EncodeToString(b[:]))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating session tmp: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		os.Remove(dir)
		return nil, err
	}
	return &SessionTmp{Path: dir, lock: lock}, nil
}

// Ensure recreates the directory if something removed it mid-session. It
// reports whether it had to.
func (t *SessionTmp) Ensure() (recreated bool, err error) {
	if fi, err := os.Lstat(t.Path); err == nil && fi.IsDir() {
		return false, nil
	}
	os.Remove(t.Path) // a non-directory squatting on the name
	if err := os.Mkdir(t.Path, 0o700); err != nil {
		return true, fmt.Errorf("recreating session tmp: %w", err)
	}
	if t.lock != nil {
		t.lock.Close()
	}
	lock, err := lockDir(t.Path)
	t.lock = lock
	return true, err
}

// Remove deletes the directory and everything in it, and releases the lock.
func (t *SessionTmp) Remove() error {
	if t.lock != nil {
		t.lock.Close()
		t.lock = nil
	}
	return os.RemoveAll(t.Path)
}

// OrphanAge is how old an unlocked session tmp must be before start-up
// clean-up removes it.
const OrphanAge = 48 * time.Hour

// CleanOrphanTmp removes session tmp directories under <state-dir>/tmp
// that are older than maxAge and whose lifetime lock is free. It never
// follows or removes a symlink, and it removes a directory only if the
// path still names the inode it locked.
func CleanOrphanTmp(stateDir string, maxAge time.Duration) (removed []string) {
	base := filepath.Join(stateDir, sessionTmpDir)
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		p := filepath.Join(base, e.Name())
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < maxAge {
			continue // symlinks and other non-directories are never touched
		}
		if removeIfUnlocked(p, fi) {
			removed = append(removed, p)
		}
	}
	return removed
}
