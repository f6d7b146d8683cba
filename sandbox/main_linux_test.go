package sandbox

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The test binary doubles as cordon's helper (the backends re-exec
// os.Executable) and as "sysprobe", a tiny program that tries one
// forbidden thing inside the sandbox and prints the errno it got.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case HelperArg:
			RunHelper(os.Args[2:])
		case "sysprobe":
			os.Exit(sysprobe(os.Args[2:]))
		}
	}
	code := m.Run()
	if testRoot != "" && os.Getenv(testRootEnv) == "" {
		os.RemoveAll(testRoot)
	}
	os.Exit(code)
}

// sysprobe prints "ok" or the name of the errno the attempt failed with.
func sysprobe(args []string) int {
	if len(args) == 0 {
		fmt.Println("usage: sysprobe WHAT [ARGS]")
		return 2
	}
	result := func(err error) int {
		if err == nil {
			fmt.Println("ok")
			return 0
		}
		if errno, ok := err.(unix.Errno); ok {
			fmt.Println(unix.ErrnoName(errno))
		} else {
			fmt.Println(err)
		}
		return 1
	}
	switch args[0] {
	case "fds":
		// The Go runtime opens descriptors of its own (epoll, its
		// wake-up pipe, the cgroup CPU quota files it watches): skip them.
		d, err := os.Open("/proc/self/fd")
		if err != nil {
			return result(err)
		}
		names, _ := d.Readdirnames(-1)
		var fds []string
		for _, n := range names {
			target, _ := os.Readlink("/proc/self/fd/" + n)
			if n == strconv.Itoa(int(d.Fd())) || strings.HasPrefix(target, "anon_inode:") || strings.HasPrefix(target, "/sys/fs/cgroup/") || strings.HasPrefix(target, "pipe:") && n != "0" && n != "1" && n != "2" {
				continue
			}
			fds = append(fds, n)
		}
		fmt.Println(strings.Join(fds, " "))
		return 0
	case "ptrace":
		pid, _ := strconv.Atoi(args[1])
		return result(unix.PtraceAttach(pid))
	case "io_uring":
		var params [120]byte
		fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		if errno != 0 {
			return result(errno)
		}
		unix.Close(int(fd))
		return result(nil)
	case "tiocsti":
		c := byte('x')
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
		return result(errnoOrNil(errno))
	case "tiocsti-highbits":
		// On a non-tty the kernel itself would answer ENOTTY; only the
		// filter answers EPERM. High bits must not slip past it.
		f, err := os.Open("/dev/null")
		if err != nil {
			return result(err)
		}
		c := byte('x')
		req := uintptr(unix.TIOCSTI) | 1<<32
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), req, uintptr(unsafe.Pointer(&c)))
		return result(errnoOrNil(errno))
	case "connect":
		conn, err := net.Dial("tcp", args[1])
		if err == nil {
			conn.Close()
		}
		return result(unwrapErrno(err))
	case "socket-unix":
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		return result(err)
	case "socketpair":
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
		return result(err)
	case "socket":
		// socket FAMILY [TYPE]: the raw system call, so that a family
		// with high bits set reaches the filter as written.
		family, _ := strconv.ParseUint(args[1], 0, 64)
		typ := uint64(unix.SOCK_STREAM)
		if len(args) > 2 {
			typ, _ = strconv.ParseUint(args[2], 0, 64)
		}
		fd, _, errno := unix.Syscall(unix.SYS_SOCKET, uintptr(family), uintptr(typ), 0)
		if errno == 0 {
			unix.Close(int(fd))
		}
		return result(errnoOrNil(errno))
	case "vsock":
		fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		return result(err)
	case "kill0":
		pid, _ := strconv.Atoi(args[1])
		return result(unix.Kill(pid, 0))
	case "unshare-user":
		return result(unix.Unshare(unix.CLONE_NEWUSER))
	case "session-leader":
		sid, _ := unix.Getsid(0)
		if sid == os.Getpid() || sid == os.Getppid() {
			return result(nil)
		}
		fmt.Printf("sid %d, pid %d, ppid %d\n", sid, os.Getpid(), os.Getppid())
		return 1
	case "write":
		return result(unwrapErrno(os.WriteFile(args[1], []byte(args[2]), 0o644)))
	case "add-key":
		_, err := unix.AddKey("user", "cordon-probe", []byte("x"), unix.KEY_SPEC_SESSION_KEYRING)
		return result(err)
	case "read-key":
		id, _ := strconv.Atoi(args[1])
		buf := make([]byte, 256)
		_, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
		return result(err)
	case "prlimit":
		pid, _ := strconv.Atoi(args[1])
		var old unix.Rlimit
		return result(unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &old))
	case "setpriority":
		pid, _ := strconv.Atoi(args[1])
		return result(unix.Setpriority(unix.PRIO_PROCESS, pid, 5))
	case "shmget":
		_, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
		return result(err)
	case "cat":
		f, err := os.Open(args[1])
		if err != nil {
			return result(unwrapErrno(err))
		}
		io.Copy(os.Stdout, f)
		return 0
	}
	fmt.Println("unknown probe", args[0])
	return 2
}

func errnoOrNil(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func unwrapErrno(err error) error {
	for err != nil {
		if errno, ok := err.(unix.Errno); ok {
			return errno
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
	return nil
}

// testRoot holds everything the tests create. It lives under / (or
// /var/tmp), not /tmp: bwrap gives the sandbox a private /tmp, and files
// the tests expect to see inside must be visible there.
var testRoot string

// testRootEnv hands a test's root to a test binary it runs as a child
// (TestHelperParent): killed, the child could not remove a root of its
// own, and the parent removes its own with everything in it.
const testRootEnv = "CORDON_TEST_ROOT"

func testBase(t testing.TB) string {
	t.Helper()
	if testRoot == "" {
		testRoot = os.Getenv(testRootEnv)
	}
	if testRoot == "" {
		// At the top of the file system where it may (root, as in CI):
		// a warm Landlock sandbox ends, rightly, when a directory on the
		// way to a read-deny entry changes, and the tests of other
		// packages, running beside these, make theirs in /var/tmp.
		dir, err := os.MkdirTemp("/", "cordon-sandbox-test-")
		if err != nil {
			dir, err = os.MkdirTemp("/var/tmp", "cordon-sandbox-test-")
		}
		if err != nil {
			t.Fatal(err)
		}
		os.Chmod(dir, 0o755)
		testRoot = dir
	}
	dir, err := os.MkdirTemp(testRoot, strings.ReplaceAll(t.Name(), "/", "_")+"-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	return dir
}

// sysprobePath is the test binary, copied where the sandbox can see it.
func sysprobePath(t testing.TB) string {
	t.Helper()
	testBase(t)
	dst := filepath.Join(testRoot, "sysprobe")
	if _, err := os.Stat(dst); err == nil {
		return dst
	}
	src, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tmp := dst + ".part"
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}
