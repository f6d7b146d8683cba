//go:build linux

package peer

import (
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Cordon's own sandbox helpers (the reaper, a warm sandbox's zygote and
// warden, bwrap) make themselves non-dumpable, so that no command can
// reach into them through /proc; a cordon that is not root then cannot
// read their descriptors either. Were every unreadable process of a
// sandbox taken for a possible client, a non-root cordon would refuse
// every client once a warm sandbox exists. So cordon tells the checker
// which processes are its own helpers, and the checker passes over those
// when they cannot be read, and only those.
//
// Why that is safe. The question is who holds the client end of the
// connection. A registered helper is identified by its pid and its start
// time, read when it is registered and again at each check: the pair names
// one process for the machine's uptime, and no other process can take it
// over. It is registered by cordon when the sandbox's zygote reports ready,
// before any command has run in the sandbox: every process then present
// beneath the sandbox's first process is bwrap or cordon's helper code,
// which never execs again. Such a process holds only the descriptors it
// made or that cordon sent it on its control socket, which no command
// holds: it cannot hold a client's socket. Whatever a command starts is a
// new process with a new start time, never registered: if it makes itself
// non-dumpable (prctl, or exec of a file it cannot read), it is still
// refused. A registered process that is readable is read like any other.
//
// While a warm sandbox starts (RegisterStarting), its helpers are still
// forking and exec'ing themselves: then the sandbox's root, cordon's own
// child, is registered instead, and every process beneath it passes, for
// no command runs there until cordon hears it is ready and registers the
// processes one by one.

type helperID struct {
	pid   int
	start uint64
}

var ownHelpers struct {
	mu  sync.Mutex
	set map[helperID]int // how many registrations name the process
	// starting are the roots of sandboxes that run no command yet:
	// every process beneath one is cordon's.
	starting map[helperID]int
}

// RegisterStarting records root, a sandbox cordon has just started and in
// which no command will run before ready is called, as cordon's whole:
// while it starts, every process beneath it is bwrap or cordon's helper
// code. ready registers the processes then present (RegisterHelpers) and
// forgets root as starting; release forgets them all. Both are safe to
// call more than once.
func RegisterStarting(root int) (ready, release func()) {
	ids := helperTree(root)
	if len(ids) == 0 {
		return func() {}, func() {}
	}
	id := ids[0]
	ownHelpers.mu.Lock()
	if ownHelpers.starting == nil {
		ownHelpers.starting = make(map[helperID]int)
	}
	ownHelpers.starting[id]++
	ownHelpers.mu.Unlock()
	var once sync.Once
	started := func() {
		once.Do(func() {
			ownHelpers.mu.Lock()
			defer ownHelpers.mu.Unlock()
			if ownHelpers.starting[id]--; ownHelpers.starting[id] <= 0 {
				delete(ownHelpers.starting, id)
			}
		})
	}
	var mu sync.Mutex
	releaseTree := func() {}
	ready = func() {
		mu.Lock()
		defer mu.Unlock()
		// Registered before root stops counting as starting: no instant
		// in which the helpers count against clients.
		releaseTree = RegisterHelpers(root)
		started()
	}
	release = func() {
		started()
		mu.Lock()
		defer mu.Unlock()
		releaseTree()
	}
	return ready, release
}

// RegisterHelpers records root and every process beneath it as cordon's own
// helpers. Call it only while nothing but cordon's helper code (and bwrap)
// runs there: for a warm sandbox, once its zygote is ready and before its
// first command. Release forgets them; it is safe to call more than once.
func RegisterHelpers(root int) (release func()) { return register(helperTree(root)) }

// RegisterHelper records the one process pid as cordon's own helper, and
// not what runs beneath it: a cold Landlock launch's reaper, whose child
// becomes the command, or its warden. Call it only for a process that runs
// cordon's helper code and never execs again. Release forgets it; it is
// safe to call more than once.
func RegisterHelper(pid int) (release func()) {
	dir, err := unix.Open("/proc", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return func() {}
	}
	s := &snapshot{dir: dir, buf: make([]byte, 8192)}
	p, err := s.statAt(dir, strconv.Itoa(pid)+"/stat", pid)
	s.close()
	if err != nil {
		return func() {} // gone: nothing to pass over
	}
	return register([]helperID{{pid, p.start}})
}

// register counts ids as registered until release, which is safe to call
// more than once.
func register(ids []helperID) (release func()) {
	ownHelpers.mu.Lock()
	if ownHelpers.set == nil {
		ownHelpers.set = make(map[helperID]int)
	}
	for _, id := range ids {
		ownHelpers.set[id]++
	}
	ownHelpers.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			ownHelpers.mu.Lock()
			defer ownHelpers.mu.Unlock()
			for _, id := range ids {
				if ownHelpers.set[id]--; ownHelpers.set[id] <= 0 {
					delete(ownHelpers.set, id)
				}
			}
		})
	}
}

// helperTree reads root and its descendants with their start times.
func helperTree(root int) []helperID {
	dir, err := unix.Open("/proc", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	s := &snapshot{dir: dir, buf: make([]byte, 8192)}
	defer s.close()
	childrenOf := s.children
	if unix.Access("/proc/thread-self/children", unix.R_OK) != nil {
		readDir(dir, s.buf, func(name []byte) {
			if pid, ok := atoi(name); ok {
				s.pids = append(s.pids, pid)
			}
		})
		tree := s.parents()
		childrenOf = func(pid int, out []int) []int { return append(out, tree[pid]...) }
	}
	var ids []helperID
	seen := make(map[int]bool)
	for stack := []int{root}; len(stack) > 0; {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		p, err := s.statAt(dir, strconv.Itoa(pid)+"/stat", pid)
		if err != nil {
			continue
		}
		ids = append(ids, helperID{pid, p.start})
		stack = childrenOf(pid, stack)
	}
	return ids
}

// ownHelper: pid is a registered helper, the same process that was
// registered (its start time read now), or runs in the sandbox of root
// while root is a registered sandbox that is still starting.
func (s *snapshot) ownHelper(pid, root int) bool {
	ownHelpers.mu.Lock()
	n := len(ownHelpers.set) + len(ownHelpers.starting)
	ownHelpers.mu.Unlock()
	if n == 0 {
		return false
	}
	p, err := s.statAt(s.dir, strconv.Itoa(pid)+"/stat", pid)
	if err != nil {
		return false
	}
	r, err := s.statAt(s.dir, strconv.Itoa(root)+"/stat", root)
	if err != nil {
		return false
	}
	ownHelpers.mu.Lock()
	defer ownHelpers.mu.Unlock()
	return ownHelpers.set[helperID{pid, p.start}] > 0 || ownHelpers.starting[helperID{root, r.start}] > 0
}
