//go:build linux

package fsfence

import (
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watcher is the process's one inotify instance (instances are few: 128
// per user by default). Events are not delivered to anyone: each check
// drains the queue and stamps what changed with a generation, and a
// pathWatch is current while nothing it depends on is stamped later than
// its start.
type watcher struct {
	mu       sync.Mutex
	fd       int
	gen      uint64
	interest map[watchKey]bool   // the names some resolution looked at
	names    map[watchKey]uint64 // a name in a watched directory
	dirs     map[int32]uint64    // a watched directory itself
	overflow uint64              // events were lost
	buf      [64 << 10]byte
}

type watchKey struct {
	wd   int32
	name string
}

// treeName stands, in a watchKey, for "the subdirectories or the .git of
// this directory" (no file name contains a NUL).
const treeName = "\x00tree"

// Events that change how a name resolves: it appears, goes, moves, or its
// attributes change (permissions can make a path unreachable). Contents
// adds writes, for files whose content a result was derived from.
const (
	dirEvents = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
		unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
	contentEvents = unix.IN_MODIFY | unix.IN_CLOSE_WRITE
	selfEvents    = unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_UNMOUNT | unix.IN_IGNORED
)

var (
	theWatcher     *watcher
	theWatcherOnce sync.Once
	// testNoWatcher makes resolutions fall back to looking again. Tests only.
	testNoWatcher bool
)

func processWatcher() *watcher {
	theWatcherOnce.Do(func() {
		fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			return // e.g. fs.inotify.max_user_instances reached: look again instead
		}
		theWatcher = &watcher{fd: fd, interest: map[watchKey]bool{}, names: map[watchKey]uint64{}, dirs: map[int32]uint64{}}
	})
	if testNoWatcher {
		return nil
	}
	return theWatcher
}

// pathWatch is what one resolution depends on: names in watched
// directories, and those directories.
type pathWatch struct {
	w      *watcher
	since  uint64
	keys   []watchKey
	failed bool // a directory could not be watched: never current
}

// beginWatch starts a pathWatch, or returns nil where there is no watcher.
func beginWatch() *pathWatch {
	w := processWatcher()
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drain()
	return &pathWatch{w: w, since: w.gen}
}

// add watches the directory holding p for changes to p's name (and to p's
// content when content is set). It must run before p is looked at.
func (pw *pathWatch) add(p string, content bool) {
	dir, name := filepath.Dir(p), filepath.Base(p)
	if dir == p {
		return // "/" is not a name in a directory, and cannot change
	}
	var extra uint32
	if content {
		extra = contentEvents
	}
	pw.watch(dir, name, extra)
}

// addTree watches dir for subdirectories and .git entries that appear, go
// or move. It must run before dir is searched.
func (pw *pathWatch) addTree(dir string) { pw.watch(dir, treeName, 0) }

// watch registers interest in key (a name, or treeName) of directory dir.
func (pw *pathWatch) watch(dir, key string, extra uint32) {
	wd, err := unix.InotifyAddWatch(pw.w.fd, dir, uint32(dirEvents|unix.IN_ONLYDIR|unix.IN_MASK_ADD)|extra)
	if err != nil {
		// A directory that does not exist (or cannot be read) may yet
		// appear; its parent's watch sees that. Anything else: no cache.
		if err != unix.ENOENT && err != unix.ENOTDIR {
			pw.failed = true
		}
		return
	}
	k := watchKey{int32(wd), key}
	pw.keys = append(pw.keys, k)
	pw.w.mu.Lock()
	pw.w.interest[k] = true
	pw.w.mu.Unlock()
}

// usable reports whether the watch covers everything it was given.
func (pw *pathWatch) usable() bool { return pw != nil && !pw.failed }

func (pw *pathWatch) current() bool {
	if pw.failed {
		return false
	}
	w := pw.w
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drain()
	if w.overflow > pw.since {
		return false
	}
	for _, k := range pw.keys {
		if w.names[k] > pw.since || w.dirs[k.wd] > pw.since {
			return false
		}
	}
	return true
}

// drain reads every queued event and stamps it. The caller holds mu.
func (w *watcher) drain() {
	for {
		n, err := unix.Read(w.fd, w.buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			// EAGAIN: the queue is empty. Any other error would hide
			// events: treat it as lost ones.
			if err != unix.EAGAIN {
				w.gen++
				w.overflow = w.gen
			}
			return
		}
		w.gen++
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			nameBytes := w.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			switch {
			case ev.Mask&unix.IN_Q_OVERFLOW != 0:
				w.overflow = w.gen
			case ev.Mask&selfEvents != 0 && ev.Len == 0:
				w.dirs[ev.Wd] = w.gen
			default:
				// Only names some resolution looked at are kept: the rest
				// of a watched directory (a busy workspace) would grow
				// the map without bound.
				name := cString(nameBytes)
				if k := (watchKey{ev.Wd, name}); w.interest[k] {
					w.names[k] = w.gen
				}
				if k := (watchKey{ev.Wd, treeName}); w.interest[k] && (ev.Mask&unix.IN_ISDIR != 0 || name == ".git") {
					w.names[k] = w.gen
				}
			}
		}
	}
}

// cString is the name of an event: NUL-padded to an alignment boundary.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
