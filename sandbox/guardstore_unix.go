//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// fileGuardStore shares baselines between cordon processes that use one
// state directory. The state directory itself is the lock that serialises
// joining and leaving (for every root: both are quick); every live call on
// a root holds a shared lock on guard/KEY.live, so "am I the last?" is a
// non-blocking exclusive lock; guard/KEY.json is the root's baseline. The
// last call removes both, and the directory when it is empty, so that
// between calls nothing of the guard is on disk. flock locks belong to open
// file descriptions, so two calls of one process exclude each other just
// as two processes do, and a killed process's locks go with it.
type fileGuardStore struct{ state, dir string }

func fileStoreFor(stateDir string) guardStore {
	if fi, err := os.Stat(stateDir); err != nil || !fi.IsDir() {
		return nil
	}
	return &fileGuardStore{state: stateDir, dir: guardDir(stateDir)}
}

// lock takes the store's mutex: an exclusive lock on the state directory.
func (s *fileGuardStore) lock() (*os.File, error) {
	f, err := os.Open(s.state)
	if err != nil {
		return nil, err
	}
	if err := flock(f, unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (s *fileGuardStore) files(root string) (live, base string) {
	k := filepath.Join(s.dir, guardKey(root))
	return k + ".live", k + ".json"
}

// forget removes a root's files, and the guard directory once it is empty
// (the caller holds the mutex, and nobody touches these files without it).
func (s *fileGuardStore) forget(root string) {
	live, base := s.files(root)
	os.Remove(base)
	os.Remove(live)
	os.Remove(s.dir) // fails, as it should, while another root is guarded
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}

// alone reports whether no call holds path's live lock, and if so leaves
// the caller holding it exclusively (until it closes the file).
func alone(path string) (*os.File, bool, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, false, err
	}
	switch err := flock(f, unix.LOCK_EX|unix.LOCK_NB); {
	case err == nil:
		return f, true, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		return f, false, nil
	default:
		f.Close()
		return nil, false, err
	}
}

func (s *fileGuardStore) begin(set guardSet) (guardHold, error) {
	liveName, baseName := s.files(set.Root)
	mu, err := s.lock()
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	defer mu.Close() // closing drops the lock
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	live, first, err := alone(liveName)
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	var recovered []Change
	var base *guardBaseline
	if first {
		// A baseline nobody holds was left by calls that ended with the
		// cordon that ran them: put it back before taking a new one.
		if old, err := readBaseline(baseName); err == nil {
			recovered, _ = old.restore()
		}
		base, err = takeBaseline(set)
	} else if base, err = readBaseline(baseName); errors.Is(err, fs.ErrNotExist) {
		base, err = takeBaseline(set)
	} else if err == nil {
		err = base.add(set)
	}
	if err == nil {
		err = writeBaseline(baseName, base)
	}
	if err == nil {
		err = flock(live, unix.LOCK_SH) // from exclusive (first) or none
	}
	if err != nil {
		live.Close()
		if first {
			s.forget(set.Root)
		}
		return nil, err
	}
	return &fileHold{s: s, root: set.Root, live: live, recovered: recovered}, nil
}

type fileHold struct {
	s         *fileGuardStore
	root      string
	live      *os.File
	recovered []Change
}

func (h *fileHold) end() ([]Change, error) {
	if h.live == nil {
		return nil, nil
	}
	liveName, baseName := h.s.files(h.root)
	mu, err := h.s.lock()
	if err != nil {
		return h.recovered, fmt.Errorf("guard: %w", err)
	}
	defer mu.Close()
	h.live.Close()
	h.live = nil
	probe, last, err := alone(liveName)
	if err != nil {
		return h.recovered, fmt.Errorf("guard: %w", err)
	}
	defer probe.Close()
	if !last {
		return h.recovered, nil
	}
	// Nobody opens the live file without holding the mutex: removing it
	// here cannot strand another call's lock on an unlinked file.
	defer h.s.forget(h.root)
	base, err := readBaseline(baseName)
	if err != nil {
		return h.recovered, err
	}
	changes, err := base.restore()
	return append(h.recovered, changes...), err
}

// RecoverGuards restores the baselines that calls of a killed cordon left
// in stateDir: what their commands wrote in protected paths is undone at
// the next start, not only at the next call on that root. It returns what
// it undid.
func RecoverGuards(stateDir string) ([]Change, error) {
	s, ok := fileStoreFor(stateDir).(*fileGuardStore)
	if !ok {
		return nil, nil
	}
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var all []Change
	var errs []error
	for _, e := range entries {
		key, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		base, err := readBaseline(filepath.Join(s.dir, e.Name()))
		if err != nil || guardKey(base.Root) != key {
			continue
		}
		c, err := s.recover(base)
		all = append(all, c...)
		errs = append(errs, err)
	}
	return all, errors.Join(errs...)
}

// recover restores base if no live call holds its root.
func (s *fileGuardStore) recover(base *guardBaseline) ([]Change, error) {
	mu, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer mu.Close()
	liveName, _ := s.files(base.Root)
	probe, last, err := alone(liveName)
	if err != nil {
		return nil, err
	}
	defer probe.Close()
	if !last {
		return nil, nil
	}
	defer s.forget(base.Root)
	return base.restore()
}
