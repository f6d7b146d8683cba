package egress

import (
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// fromSandbox returns the pid of the peer of c, a unix socket connection,
// and whether it is in a pid namespace below cordon's (bwrap's): its NSpid
// line, which /proc shows for any process without ptrace rights (a
// non-dumpable helper's too), lists more levels than cordon's own.
func fromSandbox(c net.Conn) (int, bool) {
	raw, err := c.(*net.UnixConn).SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || credErr != nil || cred.Pid <= 0 {
		return 0, false
	}
	theirs, ours := nsDepth(strconv.Itoa(int(cred.Pid))), nsDepth("self")
	return int(cred.Pid), ours > 0 && theirs > ours
}

// descends reports whether pid is root or one of its descendants, by the
// parents /proc names (readable without ptrace rights).
func descends(pid, root int) bool {
	for range 128 {
		if pid == root {
			return true
		}
		if pid <= 1 {
			return false
		}
		pid = parentPid(pid)
	}
	return false
}

// parentPid is pid's parent, 0 if unknown.
func parentPid(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "PPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(rest))
			return n
		}
	}
	return 0
}

// nsDepth is how many pid namespaces the process is in (0 if unknown).
func nsDepth(pid string) int {
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			return len(strings.Fields(rest))
		}
	}
	return 0
}
