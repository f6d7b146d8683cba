//go:build unix

package guard

import (
	"bytes"
	"encoding/json"
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
// last call removes both, so that between calls the guard directory holds
// nothing. flock locks belong to open file descriptions, so two calls of
// one process exclude each other just as two processes do, and a killed
// process's locks go with it.
//
// The directory itself stays: making and removing it cost a call more
// than all of its other file operations together (BenchmarkGuard). Its
// files are locked, read and written at once and never polled:
// os.OpenFile would register each with the runtime's poller, four system
// calls more per open (openStoreFile).
type fileGuardStore struct{ state, dir string }

func fileStoreFor(stateDir string) Store {
	if fi, err := os.Stat(stateDir); err != nil || !fi.IsDir() {
		return nil
	}
	return &fileGuardStore{state: stateDir, dir: Dir(stateDir)}
}

// openStoreFile opens one of the store's files as a plain descriptor
// wrapped by os.NewFile, which leaves it out of the poller.
func openStoreFile(path string, flags int, perm uint32) (*os.File, error) {
	for {
		fd, err := unix.Open(path, flags|unix.O_CLOEXEC, perm)
		switch err {
		case nil:
			return os.NewFile(uintptr(fd), path), nil
		case unix.EINTR:
			continue
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
}

// lock takes the store's mutex: an exclusive lock on the state directory.
func (s *fileGuardStore) lock() (*os.File, error) {
	f, err := openStoreFile(s.state, unix.O_RDONLY|unix.O_DIRECTORY, 0)
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

// forget removes a root's files (the caller holds the mutex, and nobody
// touches these files without it).
func (s *fileGuardStore) forget(root string) {
	live, base := s.files(root)
	unix.Unlink(base)
	unix.Unlink(live)
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
	f, err := openStoreFile(path, unix.O_CREAT|unix.O_RDWR|unix.O_NOFOLLOW, 0o600)
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

// readStored returns the bytes of a baseline file.
func readStored(path string) ([]byte, error) {
	f, err := openStoreFile(path, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var data bytes.Buffer
	data.Grow(int(fi.Size()) + bytes.MinRead) // EOF is seen without growing
	_, err = data.ReadFrom(f)
	return data.Bytes(), err
}

func readBaseline(path string) (*guardBaseline, error) {
	data, err := readStored(path)
	if err != nil {
		return nil, err
	}
	return decodeBaseline(path, data)
}

// writeBaseline replaces the file whole, so that a reader never sees
// half, and returns what it wrote.
func writeBaseline(path string, b *guardBaseline) ([]byte, error) {
	data, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	tmp := path + ".tmp"
	f, err := openStoreFile(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return data, os.Rename(tmp, path)
}

// maxKeptBaseline bounds the baseline a call keeps in memory while its
// command runs, so that the last call to end need not decode it again; a
// larger one (big protected files) is read back from the store.
const maxKeptBaseline = 64 << 10

func (s *fileGuardStore) Begin(set Set) (Hold, error) {
	liveName, baseName := s.files(set.Root)
	mu, err := s.lock()
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	defer mu.Close() // closing drops the lock
	if err := unix.Mkdir(s.dir, 0o700); err != nil && err != unix.EEXIST {
		return nil, fmt.Errorf("guard: %w", &fs.PathError{Op: "mkdir", Path: s.dir, Err: err})
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
		base.noteGuardedSince()
	}
	var wrote []byte
	if err == nil {
		wrote, err = writeBaseline(baseName, base)
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
	h := &fileHold{s: s, root: set.Root, live: live, recovered: recovered}
	if len(wrote) <= maxKeptBaseline {
		h.base, h.wrote = base, wrote
	}
	return h, nil
}

type fileHold struct {
	s         *fileGuardStore
	root      string
	live      *os.File // nil once the call has left
	recovered []Change
	// base is the baseline as this call wrote it (wrote); the last call
	// to end restores it without decoding when the store still holds
	// exactly those bytes, which a later call that joined would have
	// rewritten.
	base  *guardBaseline
	wrote []byte
}

func (h *fileHold) End() ([]Change, error) { return h.EndAfterHost(nil) }

func (h *fileHold) EndAfterHost(host HostChanges) ([]Change, error) {
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
		// The last call to end restores: it must know what the host
		// replaced while this call's sandbox lived.
		if len(host) > 0 {
			base, err := readBaseline(baseName)
			if err == nil && base.noteHost(host) {
				_, err = writeBaseline(baseName, base)
			}
			if err != nil {
				return h.recovered, fmt.Errorf("guard: noting what the host changed: %w", err)
			}
		}
		return h.recovered, nil
	}
	// Nobody opens the live file without holding the mutex: removing it
	// here cannot strand another call's lock on an unlinked file.
	defer h.s.forget(h.root)
	data, err := readStored(baseName)
	if err != nil {
		return h.recovered, err
	}
	base := h.base
	if base == nil || !bytes.Equal(data, h.wrote) {
		if base, err = decodeBaseline(baseName, data); err != nil {
			return h.recovered, err
		}
	}
	base.noteHost(host)
	changes, err := base.restore()
	return append(h.recovered, changes...), err
}

// Recover restores the baselines that calls of a killed cordon left
// in stateDir: what their commands wrote in protected paths is undone at
// the next start, not only at the next call on that root. It returns what
// it undid.
func Recover(stateDir string) ([]Change, error) {
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
