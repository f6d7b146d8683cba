//go:build linux

package peer

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Checker tells whether the client of a TCP connection runs inside a
// cordon sandbox. It is safe for concurrent use.
type Checker struct {
	helperArg []byte
	exe       *fileID
	exeName   []byte // the file name cordon processes are run by, argv[0]'s last element
	children  bool   // the kernel has /proc/PID/task/TID/children

	// recent are the last processes found holding an allowed client's
	// socket, newest first: the search for the next holder starts there.
	// They decide nothing.
	mu     sync.Mutex
	recent []int
}

type fileID struct{ dev, ino uint64 }

// New makes a Checker.
func New(o Options) (*Checker, error) {
	if o.HelperArg == "" {
		return nil, errors.New("peer: no helper marker to recognise sandboxes by")
	}
	c := &Checker{helperArg: []byte(o.HelperArg)}
	if o.SelfExe != "" {
		var st unix.Stat_t
		if err := unix.Stat(o.SelfExe, &st); err != nil {
			return nil, fmt.Errorf("peer: identifying the executable %s: %w", o.SelfExe, err)
		}
		c.exe = &fileID{uint64(st.Dev), st.Ino}
		name := o.SelfExe
		if l, err := os.Readlink(o.SelfExe); err == nil { // /proc/self/exe
			name = strings.TrimSuffix(l, " (deleted)")
		}
		c.exeName = []byte(filepath.Base(name))
	}
	c.children = unix.Access("/proc/thread-self/children", unix.R_OK) == nil
	return c, nil
}

// root is a process that marks a sandbox: one whose argv holds the
// helper's marker is inside it; one running cordon's executable is not,
// but its confined descendants are.
type root struct {
	pid    int
	inside bool
}

func (c *Checker) check(server, client netip.AddrPort) Verdict {
	var roots []root
	s, err := takeSnapshot(func(s *snapshot, pid int, argv []byte) {
		if r, ok := c.isRoot(s, pid, argv); ok {
			roots = append(roots, r)
		}
	})
	if err != nil {
		return refuse("cannot tell whether the client is inside a cordon sandbox: " + err.Error())
	}
	defer s.close()
	inside := c.sandboxed(s, roots)
	if len(inside) == 0 {
		return allow("no cordon sandbox is running")
	}
	sk, found, err := clientSocket(server, client)
	if err != nil {
		return refuse("cannot find the client's socket: " + err.Error())
	}
	if !found {
		local, err := isLocal(client.Addr())
		switch {
		case err != nil:
			return refuse(err.Error())
		case local:
			return refuse("the client is on this host, but its socket is not in this host's TCP tables")
		}
		return allow("the client is not on this host")
	}
	if sk.ino == 0 {
		return refuse("the client closed its socket before it could be identified")
	}
	want := []byte("socket:[" + strconv.FormatUint(uint64(sk.ino), 10) + "]")

	// The sandboxes first: they are few, and a refusal is the answer that
	// matters.
	for pid, root := range inside {
		held, err := s.holdsAnyThread(pid, want)
		if !held && (err == nil || errors.Is(err, errUnreadable) && (s.othersOnly(pid) || s.ownHelper(pid, root))) {
			continue // helpers_linux.go says why an own helper may be passed over
		}
		switch {
		case held:
			return s.refuseHolder(pid, root, "holds the client's socket and runs inside the cordon sandbox of %s")
		case errors.Is(err, errUnreadable):
			return s.refuseHolder(pid, root, "runs inside the cordon sandbox of %s and may hold the client's socket: "+err.Error()+" (it made itself non-dumpable, or is another user's)")
		default:
			return s.refuseHolder(pid, root, "runs inside the cordon sandbox of %s, and reading its descriptors failed: "+err.Error())
		}
	}
	return c.findOutside(s, inside, want, sk.uid)
}

// othersOnly: pid runs as users other than this process's, so that its
// descriptors are hidden from it for that reason. Another user's sandbox is
// no client of this cordon: it has no more of the token than any of that
// user's processes, and if it holds the client's socket, the search
// outside finds no holder and refuses. A process of this user that made
// itself non-dumpable is hidden too, and that one counts.
func (s *snapshot) othersOnly(pid int) bool {
	uids, err := s.uids(pid)
	if err != nil || len(uids) == 0 {
		return false
	}
	return !slices.Contains(uids, os.Geteuid()) && !slices.Contains(uids, os.Getuid())
}

// refuseHolder is the verdict against pid: "pid N (command) " and the
// reason, in which %s names the sandbox's root.
func (s *snapshot) refuseHolder(pid, root int, reason string) Verdict {
	argv, _ := s.cmdline(pid)
	cmd := command(argv)
	rootDesc := s.describe(root)
	return Verdict{Refused: true, PID: pid, Command: cmd,
		Reason: fmt.Sprintf("pid %d (%s) %s", pid, cmd, strings.Replace(reason, "%s", rootDesc, 1))}
}

// unconfinedArg is the helper's flag for a command it runs unconfined
// (internal/helper's --unconfined).
var unconfinedArg = []byte("--unconfined")

// isRoot: argv holds the marker, or the process runs cordon's executable.
// That is looked at only when argv[0] is named like the executable: a look
// costs most of what reading an argv costs.
func (c *Checker) isRoot(s *snapshot, pid int, argv []byte) (root, bool) {
	// The helper that runs an approved danger-full-access command
	// (--unconfined) only reaps it: what runs beneath it is not confined,
	// and stays a client like any other process. A confined command that
	// forged such an argv is still beneath its own sandbox's helper.
	if hasArg(argv, c.helperArg) && !hasArg(argv, unconfinedArg) {
		return root{pid, true}, true
	}
	if c.exe == nil {
		return root{}, false
	}
	arg0, _, _ := bytes.Cut(argv, []byte{0})
	if i := bytes.LastIndexByte(arg0, '/'); i >= 0 {
		arg0 = arg0[i+1:]
	}
	if !bytes.Equal(arg0, c.exeName) {
		return root{}, false
	}
	var st unix.Stat_t
	if unix.Fstatat(s.dir, strconv.Itoa(pid)+"/exe", &st, 0) != nil {
		return root{}, false // another user's process
	}
	return root{pid, false}, uint64(st.Dev) == c.exe.dev && st.Ino == c.exe.ino
}

// sandboxed maps every process inside a sandbox to the root of its
// sandbox. Beneath a process that holds the marker, everything is inside.
// Beneath a process running cordon's executable, what is confined is: its
// no_new_privs says so, for cordon's helper sets it before it execs a
// confined command, a danger-full-access command runs without it, and no
// process can unset it.
func (c *Checker) sandboxed(s *snapshot, roots []root) map[int]int {
	if len(roots) == 0 {
		return nil
	}
	childrenOf := func(pid int, out []int) []int { return s.children(pid, out) }
	if !c.children {
		tree := s.parents()
		childrenOf = func(pid int, out []int) []int { return append(out, tree[pid]...) }
	}
	inside := make(map[int]int)
	var stack []int
	for _, r := range roots {
		if !r.inside {
			continue
		}
		if _, seen := inside[r.pid]; !seen {
			inside[r.pid] = r.pid
		}
		stack = childrenOf(r.pid, stack[:0])
		for len(stack) > 0 {
			pid := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if _, seen := inside[pid]; seen {
				continue
			}
			inside[pid] = r.pid
			stack = childrenOf(pid, stack)
		}
	}
	seen := make(map[int]bool)
	for _, r := range roots {
		if r.inside {
			continue
		}
		stack = childrenOf(r.pid, stack[:0])
		for len(stack) > 0 {
			pid := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if _, in := inside[pid]; in || seen[pid] {
				continue
			}
			seen[pid] = true
			// Unreadable counts as confined: refusing is the safe side.
			if nnp, err := s.noNewPrivs(s.dir, strconv.Itoa(pid)+"/status"); nnp || (err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ESRCH)) {
				inside[pid] = r.pid
			}
			stack = childrenOf(pid, stack)
		}
	}
	return inside
}

// findOutside looks for want among the descriptors of the processes
// outside every sandbox, the recent holders first. A holder is judged by
// its ancestry read live, which a reused pid cannot fake.
func (c *Checker) findOutside(s *snapshot, inside map[int]int, want []byte, uid uint32) Verdict {
	c.mu.Lock()
	recent := slices.Clone(c.recent)
	c.mu.Unlock()
	try := func(pid int) (Verdict, bool) {
		if _, in := inside[pid]; in {
			return Verdict{}, false
		}
		v, held := c.judgeHolder(s, inside, pid, want)
		if held && !v.Refused {
			c.mu.Lock()
			c.recent = append([]int{pid}, slices.DeleteFunc(c.recent, func(p int) bool { return p == pid })...)
			c.recent = c.recent[:min(len(c.recent), 4)]
			c.mu.Unlock()
		}
		return v, held
	}
	for _, pid := range recent {
		if v, held := try(pid); held {
			return v
		}
	}
	// Then the processes of the socket's user, newest first, and the
	// others. A process's /proc directory belongs to its effective uid (to
	// root when it is not dumpable): one stat costs a tenth of reading a
	// descriptor table.
	var others []int
	for i := len(s.pids) - 1; i >= 0; i-- {
		pid := s.pids[i]
		if slices.Contains(recent, pid) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(s.dir, strconv.Itoa(pid), &st, 0) != nil || st.Uid != uid {
			others = append(others, pid)
			continue
		}
		if v, held := try(pid); held {
			return v
		}
	}
	for _, pid := range others {
		if v, held := try(pid); held {
			return v
		}
	}
	return refuse("no process outside the cordon sandboxes could be found holding the client's socket " +
		"(it may be passing between processes, or be held by one whose descriptors cannot be read)")
}

// judgeHolder: if pid holds want, the verdict on it. Its descriptors and
// its stat are read through one handle on /proc/PID, so that they belong
// to the same process.
func (c *Checker) judgeHolder(s *snapshot, inside map[int]int, pid int, want []byte) (Verdict, bool) {
	pd, err := unix.Openat(s.dir, strconv.Itoa(pid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Verdict{}, false
	}
	defer unix.Close(pd)
	if held, _ := holdsIn(pd, "fd", want, s.buf); !held {
		return Verdict{}, false
	}
	argv, _ := s.cmdlineAt(pd, "cmdline")
	cmd := command(argv)
	if r, ok := c.isRoot(s, pid, argv); ok && r.inside {
		// A sandbox that started after the snapshot.
		return s.refuseHolder(pid, pid, "holds the client's socket and runs inside the cordon sandbox of %s"), true
	}
	self, err := s.statAt(pd, "stat", pid)
	if err != nil {
		return refuse(fmt.Sprintf("pid %d (%s) holds the client's socket, and exited before its ancestry could be read", pid, cmd)), true
	}
	r, cordon, err := c.sandboxAbove(s, self, inside)
	switch {
	case err != nil:
		return refuse(fmt.Sprintf("pid %d (%s) holds the client's socket, and its ancestry could not be read: %v", pid, cmd, err)), true
	case r != 0:
		return s.refuseHolder(pid, r, "holds the client's socket and runs inside the cordon sandbox of %s"), true
	case cordon != 0:
		nnp, err := s.noNewPrivs(pd, "status")
		if err != nil {
			return s.refuseHolder(pid, cordon, "holds the client's socket, runs beneath %s, and whether it is confined could not be read: "+err.Error()), true
		}
		if nnp {
			return s.refuseHolder(pid, cordon, "holds the client's socket and runs inside the cordon sandbox of %s"), true
		}
	}
	return Verdict{Reason: "the client runs outside every cordon sandbox", PID: pid, Command: cmd}, true
}

// sandboxAbove walks from p up to the first process without a parent,
// reading each parent live. It returns the first that is inside a sandbox
// or holds the marker, or else the first that runs cordon's executable
// (then p is inside if it is confined). A parent that started after its
// child is a reused pid: the child has been reparented, and the walk
// starts again.
func (c *Checker) sandboxAbove(s *snapshot, p proc, inside map[int]int) (root, cordon int, err error) {
	first := p
	for tries := 0; tries < 3; tries++ {
		p, cordon = first, 0
		if tries > 0 {
			q, err := s.statAt(s.dir, strconv.Itoa(p.pid)+"/stat", p.pid)
			if err != nil || q.start != p.start {
				return 0, 0, errors.New("the process exited during the walk")
			}
			p = q
		}
		restart := false
		for depth := 0; p.ppid > 0 && depth < 1<<16; depth++ {
			if r, in := inside[p.ppid]; in {
				return r, 0, nil
			}
			parent, err := s.statAt(s.dir, strconv.Itoa(p.ppid)+"/stat", p.ppid)
			if err != nil || parent.start > p.start {
				restart = true
				break
			}
			if argv, err := s.cmdline(parent.pid); err == nil {
				if r, ok := c.isRoot(s, parent.pid, argv); ok {
					if r.inside {
						return r.pid, 0, nil
					}
					if cordon == 0 {
						cordon = r.pid
					}
				}
			}
			p = parent
		}
		if !restart {
			return 0, cordon, nil
		}
	}
	return 0, 0, errors.New("its parents kept changing")
}
