//go:build linux

package peer

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode"

	"golang.org/x/sys/unix"
)

// proc is what one read of /proc/PID/stat says of a process.
type proc struct {
	pid, ppid int
	// start is the process's start time in clock ticks after boot: a
	// parent always started before its child, which tells a reused pid
	// apart.
	start   uint64
	kthread bool
}

// snapshot is one pass over /proc: which processes existed, read through
// one open /proc. Everything else is read live.
type snapshot struct {
	dir  int   // an open /proc, the base of every path below
	pids []int // the processes with an argv (no kernel threads, no zombies)
	buf  []byte
}

// errUnreadable: the kernel refused to show a process's descriptors
// (another user's process, or one that made itself non-dumpable).
var errUnreadable = errors.New("its descriptors cannot be read")

const pfKthread = 0x00200000 // PF_KTHREAD in /proc/PID/stat's flags

// takeSnapshot lists /proc and reads each process's argv, handing it to
// each (argv is valid during the call only).
func takeSnapshot(each func(s *snapshot, pid int, argv []byte)) (*snapshot, error) {
	dir, err := unix.Open("/proc", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening /proc: %w", err)
	}
	s := &snapshot{dir: dir, buf: make([]byte, 8192)}
	var pids []int
	err = readDir(dir, s.buf, func(name []byte) {
		if pid, ok := atoi(name); ok {
			pids = append(pids, pid)
		}
	})
	if err != nil {
		s.close()
		return nil, fmt.Errorf("listing /proc: %w", err)
	}
	for _, pid := range pids {
		argv, err := s.cmdline(pid)
		if err != nil || len(argv) == 0 {
			continue // exited since the listing, a kernel thread, a zombie
		}
		s.pids = append(s.pids, pid)
		each(s, pid, argv)
	}
	if len(s.pids) == 0 {
		s.close()
		return nil, errors.New("/proc shows no process")
	}
	return s, nil
}

func (s *snapshot) close() { unix.Close(s.dir) }

// statAt reads a stat file: "PID/stat" relative to /proc, or "stat"
// relative to an open /proc/PID.
func (s *snapshot) statAt(dir int, path string, pid int) (proc, error) {
	b, err := readFileAt(dir, path, s.buf)
	if err != nil {
		return proc{}, err
	}
	s.buf = b[:cap(b)]
	return parseStat(pid, b)
}

// parseStat parses /proc/PID/stat. The command name, field 2, is in
// parentheses and may itself hold spaces and parentheses: the fields
// after it begin after the last ')'.
func parseStat(pid int, b []byte) (proc, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return proc{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := bytes.Fields(b[i+2:]) // f[0] is field 3, state
	if len(f) < 20 {
		return proc{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ppid, ok1 := atoi(f[4-3])
	flags, err2 := strconv.ParseUint(string(f[9-3]), 10, 64)
	start, err3 := strconv.ParseUint(string(f[22-3]), 10, 64)
	if !ok1 || err2 != nil || err3 != nil {
		return proc{}, fmt.Errorf("/proc/%d/stat: malformed fields", pid)
	}
	return proc{pid: pid, ppid: ppid, start: start, kthread: flags&pfKthread != 0}, nil
}

// children appends the children of pid, from /proc/PID/task/*/children
// (a child belongs to the thread that forked it, or to another thread of
// the group once that one has exited).
func (s *snapshot) children(pid int, out []int) []int {
	p := strconv.Itoa(pid) + "/task/"
	var tids []int
	readDirAt(s.dir, p, s.buf, func(name []byte) {
		if tid, ok := atoi(name); ok {
			tids = append(tids, tid)
		}
	})
	for _, tid := range tids {
		b, err := readFileAt(s.dir, p+strconv.Itoa(tid)+"/children", s.buf)
		if err != nil {
			continue
		}
		s.buf = b[:cap(b)]
		for _, f := range bytes.Fields(b) {
			if c, ok := atoi(f); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// parents is the whole process tree from every process's stat, for
// kernels without the children files.
func (s *snapshot) parents() map[int][]int {
	tree := make(map[int][]int, len(s.pids))
	for _, pid := range s.pids {
		if p, err := s.statAt(s.dir, strconv.Itoa(pid)+"/stat", pid); err == nil {
			tree[p.ppid] = append(tree[p.ppid], pid)
		}
	}
	return tree
}

// noNewPrivs reads the NoNewPrivs line of a status file: "PID/status"
// relative to /proc, or "status" relative to an open /proc/PID.
func (s *snapshot) noNewPrivs(dir int, path string) (bool, error) {
	b, err := readFileAt(dir, path, s.buf)
	if err != nil {
		return false, err
	}
	s.buf = b[:cap(b)]
	_, rest, ok := bytes.Cut(b, []byte("\nNoNewPrivs:"))
	if !ok {
		return false, errors.New("no NoNewPrivs line in " + path)
	}
	v, _, _ := bytes.Cut(rest, []byte{'\n'})
	return string(bytes.TrimSpace(v)) == "1", nil
}

// uids reads the Uid line of /proc/PID/status: real, effective, saved
// and file-system uid. Unlike the descriptors, it is readable whoever owns
// the process.
func (s *snapshot) uids(pid int) ([]int, error) {
	b, err := readFileAt(s.dir, strconv.Itoa(pid)+"/status", s.buf)
	if err != nil {
		return nil, err
	}
	s.buf = b[:cap(b)]
	_, rest, ok := bytes.Cut(b, []byte("\nUid:"))
	if !ok {
		return nil, fmt.Errorf("no Uid line in /proc/%d/status", pid)
	}
	line, _, _ := bytes.Cut(rest, []byte{'\n'})
	var out []int
	for _, f := range bytes.Fields(line) {
		if u, ok := atoi(f); ok {
			out = append(out, u)
		}
	}
	return out, nil
}

// cmdline is the raw argv of pid, NUL-separated ("" for a kernel thread or
// a zombie).
func (s *snapshot) cmdline(pid int) ([]byte, error) {
	return s.cmdlineAt(s.dir, strconv.Itoa(pid)+"/cmdline")
}

func (s *snapshot) cmdlineAt(dir int, path string) ([]byte, error) {
	b, err := readFileAt(dir, path, s.buf)
	if err != nil {
		return nil, err
	}
	s.buf = b[:cap(b)]
	return b, nil
}

// hasArg reports whether the NUL-separated argv holds exactly arg.
func hasArg(argv []byte, arg []byte) bool {
	for len(argv) > 0 {
		i := bytes.IndexByte(argv, 0)
		if i < 0 {
			return bytes.Equal(argv, arg)
		}
		if bytes.Equal(argv[:i], arg) {
			return true
		}
		argv = argv[i+1:]
	}
	return false
}

// command names the program of an argv for a person: argv[0], and "…"
// when arguments follow. The arguments are left out, for they may hold
// secrets (a bearer token on curl's command line) that would end up in
// cordon's log; anything unprintable becomes '?', so that the log cannot
// carry terminal escapes.
func command(argv []byte) string {
	const max = 160
	arg0, rest, _ := bytes.Cut(argv, []byte{0})
	more := len(bytes.Trim(rest, "\x00")) > 0
	out := []rune{}
	for _, r := range string(arg0) {
		if len(out) == max {
			more = true
			break
		}
		if !unicode.IsPrint(r) {
			r = '?'
		}
		out = append(out, r)
	}
	if more {
		out = append(out, ' ', '…')
	}
	return string(out)
}

// describe is "pid N (its command)".
func (s *snapshot) describe(pid int) string {
	argv, _ := s.cmdline(pid)
	return fmt.Sprintf("pid %d (%s)", pid, command(argv))
}

// holdsIn reports whether the descriptor table shown at path (a
// /proc/PID/fd or /proc/PID/task/TID/fd directory, relative to dir) holds
// the descriptor whose link reads want ("socket:[INODE]"). A table that
// has gone (the process exited) holds nothing.
func holdsIn(dir int, path string, want []byte, buf []byte) (bool, error) {
	fd, err := unix.Openat(dir, path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, classify(err)
	}
	defer unix.Close(fd)
	link := make([]byte, len(want)+1)
	found := false
	var lerr error
	err = readDir(fd, buf, func(name []byte) {
		if found || lerr != nil {
			return
		}
		n, err := unix.Readlinkat(fd, string(name), link)
		switch {
		case err == nil:
			found = n == len(want) && bytes.Equal(link[:n], want)
		case errors.Is(err, unix.ENOENT):
			// closed since the listing
		default:
			lerr = classify(err)
		}
	})
	if err != nil {
		return false, classify(err)
	}
	if found {
		return true, nil
	}
	return false, lerr
}

// classify maps the errors of reading a process's descriptors: gone
// (nil, it holds nothing any more), unreadable, or something else.
func classify(err error) error {
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ESRCH):
		return nil
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return errUnreadable
	}
	return err
}

// holdsAnyThread reports whether any descriptor table of pid holds want.
// Threads normally share one table, but a thread made by clone without
// CLONE_FILES (or one that called unshare) has its own, and a leader that
// has exited shows an empty one: each thread whose table kcmp does not
// find equal to the leader's is read as well.
func (s *snapshot) holdsAnyThread(pid int, want []byte) (bool, error) {
	p := strconv.Itoa(pid)
	held, err := holdsIn(s.dir, p+"/fd", want, s.buf)
	if held || err != nil {
		return held, err
	}
	var tids []int
	if err := readDirAt(s.dir, p+"/task", s.buf, func(name []byte) {
		if tid, ok := atoi(name); ok && tid != pid {
			tids = append(tids, tid)
		}
	}); err != nil {
		return false, classify(err)
	}
	for _, tid := range tids {
		if sameFiles(pid, tid) {
			continue
		}
		held, err := holdsIn(s.dir, p+"/task/"+strconv.Itoa(tid)+"/fd", want, s.buf)
		if held || err != nil {
			return held, err
		}
	}
	return false, nil
}

// sameFiles: kcmp(KCMP_FILES) says the two tasks share a descriptor
// table. Any failure (no kcmp, no permission, a task gone) says no, so
// that the table is read.
func sameFiles(pid, tid int) bool {
	const kcmpFiles = 2
	r, _, errno := unix.Syscall6(unix.SYS_KCMP, uintptr(pid), uintptr(tid), kcmpFiles, 0, 0, 0)
	return errno == 0 && r == 0
}

// readDir calls fn with the name of each entry of the open directory fd,
// "." and ".." left out. name is valid only during the call.
func readDir(fd int, buf []byte, fn func(name []byte)) error {
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		for b := buf[:n]; len(b) >= 19; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				return errors.New("malformed directory entry")
			}
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if !(len(name) == 1 && name[0] == '.') && !(len(name) == 2 && name[0] == '.' && name[1] == '.') {
				fn(name)
			}
			b = b[reclen:]
		}
	}
}

func readDirAt(dir int, path string, buf []byte, fn func(name []byte)) error {
	fd, err := unix.Openat(dir, path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return readDir(fd, buf, fn)
}

// readFileAt reads a whole stat or cmdline file into buf, growing it as
// needed. The kernel fills a read of either as far as the buffer allows,
// so a short read is the end: the read that would return 0 is saved, one
// syscall per process and file.
func readFileAt(dir int, path string, buf []byte) ([]byte, error) {
	fd, err := unix.Openat(dir, path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	buf = buf[:cap(buf)]
	n := 0
	for {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		m, err := unix.Read(fd, buf[n:])
		if err != nil {
			return nil, err
		}
		n += m
		if m == 0 || n < len(buf) {
			return buf[:n], nil
		}
	}
}

// atoi parses a decimal pid without allocating.
func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
