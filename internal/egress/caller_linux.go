package egress

import (
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// fromSandbox reports whether the peer of c, a unix socket connection, is
// in a pid namespace below cordon's (bwrap's): its NSpid line, which
// /proc shows for any process without ptrace rights (a non-dumpable
// helper's too), lists more levels than cordon's own.
func fromSandbox(c net.Conn) bool {
	raw, err := c.(*net.UnixConn).SyscallConn()
	if err != nil {
		return false
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || credErr != nil || cred.Pid <= 0 {
		return false
	}
	theirs, ours := nsDepth(strconv.Itoa(int(cred.Pid))), nsDepth("self")
	return ours > 0 && theirs > ours
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
