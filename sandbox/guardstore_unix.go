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

// fileGuardStore shares baselines between cordon processes through files
// in <state-dir>/guard: "lock" serialises joining and leaving (for every
// root: both are quick), every live call on a root holds a shared lock on
// KEY.live (so "am I the last?" is a non-blocking exclusive lock), and
// KEY.json is the root's baseline. The last call removes both, so that
// between calls only "lock" is there. flock locks belong to open file
// descriptions, so two calls of one process exclude each other just as
// two processes do, and a killed process's locks go with it.
type fileGuardStore struct{ dir string }

func fileStoreFor(stateDir string) guardStore {
	dir := guardDir(stateDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil
	}
	s := &fileGuardStore{dir: dir}
	f, err := os.OpenFile(s.lockFile(), os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil
	}
	f.Close()
	return s
}

func (s *fileGuardStore) lockFile() string { return filepath.Join(s.dir, "lock") }

func (s *fileGuardStore) files(root string) (lock, live, base string) {
	k := filepath.Join(s.dir, guardKey(root))
	return s.lockFile(), k + ".live", k + ".json"
}

// lockPath opens path and takes a blocking lock of kind how on it.
func lockPath(path string, how int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := flock(f, how); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
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
	lockName, liveName, baseName := s.files(set.Root)
	mu, err := lockPath(lockName, unix.LOCK_EX)
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	defer mu.Close() // closing drops the lock
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
		if first {
			os.Remove(liveName)
			os.Remove(baseName)
		}
		live.Close()
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
	lockName, liveName, baseName := h.s.files(h.root)
	mu, err := lockPath(lockName, unix.LOCK_EX)
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
	// Nobody opens the live file without holding "lock": removing it here
	// cannot strand another call's lock on an unlinked file.
	defer os.Remove(liveName)
	base, err := readBaseline(baseName)
	if err != nil {
		return h.recovered, err
	}
	changes, err := base.restore()
	os.Remove(baseName)
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
		mu, err := lockPath(s.lockFile(), unix.LOCK_EX)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		liveName := filepath.Join(s.dir, key+".live")
		probe, last, err := alone(liveName)
		if err == nil && last {
			c, err := base.restore()
			all = append(all, c...)
			errs = append(errs, err)
			os.Remove(filepath.Join(s.dir, e.Name()))
			os.Remove(liveName)
		}
		if probe != nil {
			probe.Close()
		}
		mu.Close()
	}
	return all, errors.Join(errs...)
}
