//go:build !linux

package sandbox

import "sync"

// Only bwrap's mounts follow a replaced file; no other backend needs the
// watch (lasting_linux.go).
func watchLasting(paths []string, lost func(path string)) (stop func(), err error) {
	return func() {}, nil
}

type lostProtection struct{ mu sync.Mutex }

func (l *lostProtection) set(string) {}

func (l *lostProtection) get() (string, bool) { return "", false }

func (l *lostProtection) replaced() []string { return nil }
