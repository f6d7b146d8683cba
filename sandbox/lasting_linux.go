package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"unsafe"

	"github.com/cordonhq/cordon/internal/pathx"
	"golang.org/x/sys/unix"
)

// Protection that lasts as long as the sandbox (bwrap). A bind mount
// follows the file, not the path: when the human's own tools replace a
// protected or hidden file by rename (git config, git credential-store, an
// agent rewriting its config), the mount is detached inside every live
// sandbox and the new file is an ordinary one there. Three things keep it:
//
//   - Landlock inside bwrap grants no read of a read-deny entry outside the
//     writable roots, and none of what is renamed in over it later (a new
//     inode): no window at all (bwrap_linux.go, readgrants_linux.go).
//   - Everything else a mount keeps — protected paths and pinned
//     directories in the writable roots, read-deny entries there, and all
//     read-deny entries where Landlock is missing — is watched: one inotify
//     instance for the whole process watches the directory that holds
//     each, and a sandbox one of whose paths is replaced, removed or
//     moved is killed whole (a cold launch, a warm sandbox with its
//     call): its command ends with ProtectionLost.
//   - The guard (package guard) holds the existing protected paths too, and
//     puts back, once the sandbox is gone, whatever was written to them
//     in the moment between the rename and the kill. What the host put
//     there is not lost: the guard keeps it aside, beside the path
//     (setAsideHost), for the human to compare and keep.

// lastingMask is what replaces, removes or moves a directory's entry.
const lastingMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ONLYDIR

// lastingWatcher is the process's one inotify instance.
type lastingWatcher struct {
	mu   sync.Mutex
	fd   int
	dirs map[string]*watchedDir // by path
	byWD map[int32]*watchedDir
}

// watchedDir is one watched directory and who watches which of its
// entries.
type watchedDir struct {
	wd    int32
	path  string
	names map[string][]*lastingSub
}

// lastingSub is one sandbox's watch.
type lastingSub struct {
	keys [][2]string // directory, entry name
	path []string    // the watched path each key leads to
	lost func(path string)
	// fired are the paths lost was called with: once each, so that the
	// guard learns every path the host replaced, not only the first.
	mu    sync.Mutex
	fired map[string]bool
}

var (
	lastingOnce sync.Once
	lasting     *lastingWatcher
	lastingErr  error
)

// theLastingWatcher starts the process's watcher on first use.
func theLastingWatcher() (*lastingWatcher, error) {
	lastingOnce.Do(func() {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err != nil {
			lastingErr = fmt.Errorf("watching protected paths: %w", err)
			return
		}
		lasting = &lastingWatcher{fd: fd, dirs: map[string]*watchedDir{}, byWD: map[int32]*watchedDir{}}
		go lasting.read()
	})
	return lasting, lastingErr
}

// watchLasting watches paths (absolute, cleaned) until stop is called, and
// calls lost, once for each, with those of them that the host replaced,
// removed or moved (or with "" when events were lost). It fails closed:
// a sandbox whose paths cannot be watched does not start.
func watchLasting(paths []string, lost func(path string)) (stop func(), err error) {
	if len(paths) == 0 {
		return func() {}, nil
	}
	w, err := theLastingWatcher()
	if err != nil {
		return nil, err
	}
	sub := &lastingSub{lost: lost}
	for _, p := range paths {
		// The entry itself: the directories on the way that a rename
		// could carry the mounts away with are pinned, and watched as
		// entries of their own (lastingPaths). A directory above the
		// pins (a nested repository's worktree, which cordon lets a
		// command move) is not: the next call's plan follows it.
		p = filepath.Clean(p)
		k := [2]string{filepath.Dir(p), filepath.Base(p)}
		if !slices.Contains(sub.keys, k) {
			sub.keys = append(sub.keys, k)
			sub.path = append(sub.path, p)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, k := range sub.keys {
		d := w.dirs[k[0]]
		if d == nil {
			wd, err := unix.InotifyAddWatch(w.fd, k[0], lastingMask)
			if err != nil {
				w.unsubscribe(sub, i)
				return nil, &UnavailableError{Reason: fmt.Sprintf("watching %s, on the way to the protected path %s: %v", k[0], sub.path[i], err)}
			}
			d = &watchedDir{wd: int32(wd), path: k[0], names: map[string][]*lastingSub{}}
			w.dirs[k[0]], w.byWD[int32(wd)] = d, d
		}
		d.names[k[1]] = append(d.names[k[1]], sub)
	}
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.unsubscribe(sub, len(sub.keys))
	}, nil
}

// unsubscribe removes sub's first n keys, and the watches no one needs.
func (w *lastingWatcher) unsubscribe(sub *lastingSub, n int) {
	for _, k := range sub.keys[:n] {
		d := w.dirs[k[0]]
		if d == nil {
			continue
		}
		subs := slices.DeleteFunc(d.names[k[1]], func(s *lastingSub) bool { return s == sub })
		if len(subs) == 0 {
			delete(d.names, k[1])
		} else {
			d.names[k[1]] = subs
		}
		if len(d.names) == 0 {
			unix.InotifyRmWatch(w.fd, uint32(d.wd))
			delete(w.dirs, d.path)
			delete(w.byWD, d.wd)
		}
	}
}

// read takes the events for as long as the process lives.
func (w *lastingWatcher) read() {
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(w.fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			// The watcher is gone: no sandbox can count on it any more.
			w.fireAll()
			return
		}
		w.handle(buf[:n])
	}
}

// handle fires the subscriptions that the events in buf reach.
func (w *lastingWatcher) handle(buf []byte) {
	var fire []func()
	w.mu.Lock()
	for len(buf) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(buf) {
			break
		}
		name := string(bytes.TrimRight(buf[unix.SizeofInotifyEvent:end], "\x00"))
		buf = buf[end:]
		d := w.byWD[ev.Wd]
		switch {
		case ev.Mask&unix.IN_Q_OVERFLOW != 0:
			// Events were lost: any sandbox may have lost its protection.
			for _, d := range w.dirs {
				fire = appendFires(fire, d)
			}
		case d == nil:
		case ev.Mask&unix.IN_IGNORED != 0:
			// The directory itself is gone (its removal is seen in its
			// parent too): everything beneath it moved.
			fire = appendFires(fire, d)
			delete(w.byWD, d.wd)
			delete(w.dirs, d.path)
		default:
			for _, s := range d.names[name] {
				fire = append(fire, s.fire(s.pathOf(d.path, name)))
			}
		}
	}
	w.mu.Unlock()
	for _, f := range fire {
		f()
	}
}

// appendFires adds the firing of everyone watching an entry of d.
func appendFires(fire []func(), d *watchedDir) []func() {
	for name, subs := range d.names {
		for _, s := range subs {
			fire = append(fire, s.fire(s.pathOf(d.path, name)))
		}
	}
	return fire
}

func (w *lastingWatcher) fireAll() {
	var fire []func()
	w.mu.Lock()
	for _, d := range w.dirs {
		fire = appendFires(fire, d)
	}
	w.mu.Unlock()
	for _, f := range fire {
		f()
	}
}

// pathOf is the watched path that the entry name of dir leads to.
func (s *lastingSub) pathOf(dir, name string) string {
	if i := slices.Index(s.keys, [2]string{dir, name}); i >= 0 {
		return s.path[i]
	}
	return filepath.Join(dir, name)
}

// fire returns what tells the sandbox, once for each path, that path lost
// its protection.
func (s *lastingSub) fire(path string) func() {
	return func() {
		s.mu.Lock()
		first := !s.fired[path]
		if s.fired == nil {
			s.fired = map[string]bool{}
		}
		s.fired[path] = true
		s.mu.Unlock()
		if first {
			go s.lost(path)
		}
	}
}

// lastingPaths are the paths of a bwrap sandbox that the watch keeps: what
// a mount protects and Landlock does not (see above).
func lastingPaths(p ExecutionPolicy, plan mountPlan, landlock bool) []string {
	paths := slices.Concat(plan.ProtectExisting, plan.PinDirs)
	for _, d := range slices.Concat(plan.HideFiles, plan.HideDirs) {
		if !landlock || pathx.WithinAny(d, p.WritableRoots) {
			paths = append(paths, d)
		}
	}
	return paths
}

// landlockDenyReadInBwrap are the read-deny entries Landlock keeps inside
// bwrap: those outside the writable roots, whose read Landlock can refuse.
func landlockDenyReadInBwrap(p ExecutionPolicy, egress *egressEndpoint) []string {
	var deny []string
	for _, d := range p.ReadDeny {
		// A secret's file bound to its masked copy, or the hidden
		// directory that holds one, is read there: the grant goes to the
		// copy's (the tmpfs's) inode, so a real file the host renames over
		// the path later is still refused.
		if !pathx.WithinAny(d, p.WritableRoots) && egress.maskedCopy(d) == "" && len(egress.maskedWithin(d)) == 0 {
			deny = append(deny, d)
		}
	}
	return deny
}

// lostProtection is how a sandbox's end is told that it lost protection.
type lostProtection struct {
	mu    sync.Mutex
	path  string
	lost  bool
	paths []string // every path the watch saw replaced, "" when it could not tell
}

func (l *lostProtection) set(path string) {
	l.mu.Lock()
	if !l.lost {
		l.path, l.lost = path, true
	}
	if !slices.Contains(l.paths, path) {
		l.paths = append(l.paths, path)
	}
	l.mu.Unlock()
}

// replaced returns every path that lost its protection ("" among them when
// events were lost): the host changed them, and the guard keeps the host's
// version aside (package guard).
func (l *lostProtection) replaced() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.paths)
}

// get returns the path that lost its protection ("" when events were
// lost) and whether one did.
func (l *lostProtection) get() (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.path, l.lost
}
