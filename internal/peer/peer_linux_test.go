//go:build linux

package peer

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The test binary plays every process these tests need, re-executed with
// a role as its first argument: a sandbox root whose argv holds a marker,
// and a client that connects and holds its socket until its stdin closes.
// Nothing about /proc is simulated.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "peer-test-root": // peer-test-root MARKER -- CMD...
			os.Exit(runRoot(os.Args[4:]))
		case "peer-test-helper": // a helper that made itself non-dumpable, holding nothing
			if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
				os.Exit(1)
			}
			fmt.Printf("ready %d\n", os.Getpid())
			io.Copy(io.Discard, os.Stdin)
			os.Exit(0)
		case "peer-test-connect": // peer-test-connect ADDR [OPTION...]
			os.Exit(runConnect(os.Args[2], os.Args[3:]))
		}
	}
	os.Exit(m.Run())
}

func init() {
	if len(os.Args) > 1 && os.Args[1] == "peer-test-connect" {
		// The main goroutine keeps the main thread, the thread group's
		// leader, so that thread-table's thread is another one.
		runtime.LockOSThread()
	}
}

func runRoot(argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "peer-test-root:", err)
		return 1
	}
	return 0
}

// runConnect connects to addr and says "ready PID" once its socket is
// where the options want it:
//
//	nondumpable   prctl(PR_SET_DUMPABLE, 0) first
//	nnp           prctl(PR_SET_NO_NEW_PRIVS, 1) first, as cordon's helper does
//	mapped6       dial from an IPv6 socket, to the IPv4-mapped address
//	thread-table  connect from a thread that has its own descriptor table
//	close         send a request and close the socket at once
func runConnect(addr string, opts []string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "peer-test-connect:", err); return 1 }
	has := func(o string) bool {
		for _, x := range opts {
			if x == o {
				return true
			}
		}
		return false
	}
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return fail(err)
	}
	if has("nondumpable") {
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
			return fail(err)
		}
	}
	if has("nnp") {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fail(err)
		}
	}
	done := make(chan error, 1)
	go func() {
		if has("thread-table") {
			// This thread never runs anything else: its table, unshared
			// here, is the only one that will hold the socket.
			runtime.LockOSThread()
			if unix.Gettid() == os.Getpid() {
				done <- errors.New("thread-table: running on the leader thread")
				return
			}
			if err := unix.Unshare(unix.CLONE_FILES); err != nil {
				done <- err
				return
			}
		}
		done <- rawConnect(ap, has("mapped6"), has("close"))
		if has("thread-table") {
			select {} // keep the thread, and its table, alive
		}
	}()
	if err := <-done; err != nil {
		return fail(err)
	}
	fmt.Printf("ready %d\n", os.Getpid())
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// rawConnect uses the socket calls themselves, outside Go's poller, so
// that the descriptor lives in the calling thread's table only.
func rawConnect(ap netip.AddrPort, mapped6, closeNow bool) error {
	var fd int
	var err error
	var sa unix.Sockaddr
	switch {
	case mapped6:
		fd, err = unix.Socket(unix.AF_INET6, unix.SOCK_STREAM, 0)
		sa = &unix.SockaddrInet6{Port: int(ap.Port()), Addr: netip.AddrFrom16(ap.Addr().As16()).As16()}
	case ap.Addr().Is4():
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		sa = &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	default:
		fd, err = unix.Socket(unix.AF_INET6, unix.SOCK_STREAM, 0)
		sa = &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	if err != nil {
		return err
	}
	if err := unix.Connect(fd, sa); err != nil {
		return err
	}
	if closeNow {
		unix.Write(fd, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		return unix.Close(fd)
	}
	return nil
}

// marker is a helper marker that no real cordon uses, so that the
// sandboxes of cordon tests running at the same time stay out of the way.
func marker(t testing.TB) string {
	b := make([]byte, 6)
	rand.Read(b)
	return "__sandbox-helper-test-" + hex.EncodeToString(b)
}

func self(t testing.TB) string {
	exe, err := os.Executable()
	require.NoError(t, err)
	return exe
}

// child is a started process that says "ready PID" and lives until its
// stdin is closed.
type child struct {
	cmd *exec.Cmd
	pid int // the pid it reported: the connecting process
}

func start(t testing.TB, argv ...string) *child {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	// A child built with -race would otherwise wait a second at exit.
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		f := strings.Fields(l)
		require.Len(t, f, 2, "child said %q", l)
		pid, err := strconv.Atoi(f[1])
		require.NoError(t, err)
		return &child{cmd: cmd, pid: pid}
	case <-time.After(10 * time.Second):
		t.Fatalf("%v did not get ready", argv)
	}
	return nil
}

// sandbox starts a process whose argv holds mark, running argv beneath it.
func sandbox(t testing.TB, mark string, argv ...string) *child {
	return start(t, append([]string{self(t), "peer-test-root", mark, "--"}, argv...)...)
}

// idleSandbox is a sandbox with nothing in it that holds a socket: it
// makes the checker do its whole work for a client outside.
func idleSandbox(t testing.TB, mark string) {
	sandbox(t, mark, "/bin/sh", "-c", `echo ready $$; exec cat`)
}

// accepted is the server's end of the next connection to ln.
func accepted(t testing.TB, ln net.Listener) (server, client netip.AddrPort) {
	t.Helper()
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c.LocalAddr().(*net.TCPAddr).AddrPort(), c.RemoteAddr().(*net.TCPAddr).AddrPort()
}

func listen(t testing.TB, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil && strings.Contains(addr, "::") {
		t.Skipf("no IPv6 here: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	return ln
}

func checker(t testing.TB, mark string) *Checker {
	c, err := New(Options{HelperArg: mark})
	require.NoError(t, err)
	return c
}

func connectArgv(t testing.TB, addr string, opts ...string) []string {
	return append([]string{self(t), "peer-test-connect", addr}, opts...)
}

func TestOrdinaryClientAllowed(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(addr, func(t *testing.T) {
			mark := marker(t)
			idleSandbox(t, mark)
			ln := listen(t, addr)
			cl := start(t, connectArgv(t, ln.Addr().String())...)
			server, client := accepted(t, ln)
			v := checker(t, mark).Check(server, client)
			assert.False(t, v.Refused, v.Reason)
			assert.Equal(t, cl.pid, v.PID, "the holder found: %s", v.Reason)
			assert.Equal(t, self(t)+" …", v.Command)
		})
	}
}

func TestSandboxedClientRefused(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(addr, func(t *testing.T) {
			mark := marker(t)
			ln := listen(t, addr)
			sb := sandbox(t, mark, connectArgv(t, ln.Addr().String())...)
			server, client := accepted(t, ln)
			v := checker(t, mark).Check(server, client)
			assert.True(t, v.Refused, v.Reason)
			assert.Equal(t, sb.pid, v.PID)
			assert.Contains(t, v.Reason, "holds the client's socket and runs inside the cordon sandbox of pid "+strconv.Itoa(sb.cmd.Process.Pid))
		})
	}
}

// The real marker: a process whose argv holds "__sandbox-helper" is a
// sandbox whatever else runs on the machine.
func TestHelperArgOfCordon(t *testing.T) {
	ln := listen(t, "127.0.0.1:0")
	sb := sandbox(t, "__sandbox-helper", connectArgv(t, ln.Addr().String())...)
	server, client := accepted(t, ln)
	v := checker(t, "__sandbox-helper").Check(server, client)
	assert.True(t, v.Refused, v.Reason)
	assert.Equal(t, sb.pid, v.PID)
}

// A descendant at any depth, behind a shell that does not exec.
func TestGrandchildRefused(t *testing.T) {
	mark := marker(t)
	ln := listen(t, "127.0.0.1:0")
	sb := sandbox(t, mark, "/bin/sh", "-c", `"$0" peer-test-connect "$1"; true`, self(t), ln.Addr().String())
	server, client := accepted(t, ln)
	v := checker(t, mark).Check(server, client)
	t.Log(v.Reason)
	assert.True(t, v.Refused, v.Reason)
	assert.Equal(t, sb.pid, v.PID)
}

// A client that made itself non-dumpable: root reads its descriptors and
// finds the socket; anyone else cannot read them, and refuses all the
// same (TestAsNobody runs this test as nobody).
func TestNonDumpableRefused(t *testing.T) {
	mark := marker(t)
	ln := listen(t, "127.0.0.1:0")
	sb := sandbox(t, mark, connectArgv(t, ln.Addr().String(), "nondumpable")...)
	server, client := accepted(t, ln)
	v := checker(t, mark).Check(server, client)
	t.Log(v.Reason)
	assert.True(t, v.Refused, v.Reason)
	assert.Equal(t, sb.pid, v.PID)
	if os.Geteuid() == 0 {
		assert.Contains(t, v.Reason, "holds the client's socket")
	} else {
		assert.Contains(t, v.Reason, "non-dumpable")
	}
}

// A dual-stack listener sees IPv4 clients as IPv4-mapped IPv6, whether
// they dialled from an IPv4 socket or an IPv6 one.
func TestIPv4MappedClients(t *testing.T) {
	for _, opt := range []string{"", "mapped6"} {
		t.Run("client="+opt, func(t *testing.T) {
			mark := marker(t)
			ln := listen(t, "[::]:0")
			addr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(ln.Addr().(*net.TCPAddr).Port)).String()
			argv := connectArgv(t, addr)
			if opt != "" {
				argv = append(argv, opt)
			}
			sb := sandbox(t, mark, argv...)
			server, client := accepted(t, ln)
			require.True(t, client.Addr().Is4In6(), "the server sees %v", client)
			v := checker(t, mark).Check(server, client)
			assert.True(t, v.Refused, v.Reason)
			assert.Equal(t, sb.pid, v.PID)

			cl := start(t, argv...)
			server, client = accepted(t, ln)
			v = checker(t, mark).Check(server, client)
			assert.False(t, v.Refused, v.Reason)
			assert.Equal(t, cl.pid, v.PID)
		})
	}
}

// A thread with a descriptor table of its own hides its socket from
// /proc/PID/fd: it is found under /proc/PID/task/TID/fd.
func TestThreadOwnTableRefused(t *testing.T) {
	mark := marker(t)
	ln := listen(t, "127.0.0.1:0")
	sb := sandbox(t, mark, connectArgv(t, ln.Addr().String(), "thread-table")...)
	server, client := accepted(t, ln)
	v := checker(t, mark).Check(server, client)
	t.Log(v.Reason)
	assert.True(t, v.Refused, v.Reason)
	assert.Equal(t, sb.pid, v.PID)
	assert.Contains(t, v.Reason, "holds the client's socket")
}

// A socket nobody holds any more cannot be shown to come from outside.
func TestClosedClientRefusedWhileSandboxRuns(t *testing.T) {
	mark := marker(t)
	idleSandbox(t, mark)
	ln := listen(t, "127.0.0.1:0")
	start(t, connectArgv(t, ln.Addr().String(), "close")...)
	server, client := accepted(t, ln)
	v := checker(t, mark).Check(server, client)
	t.Log(v.Reason)
	assert.True(t, v.Refused, v.Reason)
	assert.Contains(t, v.Reason, "closed its socket")
}

func TestNoSandboxAllowsWithoutLooking(t *testing.T) {
	mark := marker(t)
	ln := listen(t, "127.0.0.1:0")
	start(t, connectArgv(t, ln.Addr().String(), "close")...)
	server, client := accepted(t, ln)
	v := checker(t, mark).Check(server, client)
	t.Log(v.Reason)
	assert.False(t, v.Refused, v.Reason)
	assert.Equal(t, "no cordon sandbox is running", v.Reason)
}

// A client that is not in this host's tables is on another host (the
// bearer token guards against it); one with a local address must be.
func TestClientsNotInTheTables(t *testing.T) {
	mark := marker(t)
	idleSandbox(t, mark)
	c := checker(t, mark)
	v := c.Check(netip.MustParseAddrPort("192.0.2.1:8765"), netip.MustParseAddrPort("198.51.100.7:40000"))
	assert.False(t, v.Refused, v.Reason)
	assert.Equal(t, "the client is not on this host", v.Reason)
	for _, cl := range []string{"127.0.0.1:1", "[::1]:1", "[::ffff:127.0.0.1]:1"} {
		v = c.Check(netip.MustParseAddrPort("127.0.0.1:8765"), netip.MustParseAddrPort(cl))
		assert.True(t, v.Refused, "%s: %s", cl, v.Reason)
	}
}

// cordon's own executable: a confined descendant of a process running it
// is inside, even once a helper has exec'd its command; an unconfined one
// (danger-full-access, --no-sandbox) is not.
func TestDescendantOfSelfExe(t *testing.T) {
	mark := marker(t)
	c, err := New(Options{HelperArg: mark, SelfExe: self(t)})
	require.NoError(t, err)
	idleSandbox(t, mark) // so that the unconfined client is looked for, too
	for _, confined := range []bool{true, false} {
		t.Run(fmt.Sprint("confined=", confined), func(t *testing.T) {
			ln := listen(t, "127.0.0.1:0")
			argv := connectArgv(t, ln.Addr().String())
			if confined {
				argv = append(argv, "nnp")
			}
			// Behind a shell, so that the outside search's walk up the
			// ancestry meets this process too.
			cl := start(t, append([]string{"/bin/sh", "-c", `"$@"; true`, "sh"}, argv...)...)
			server, client := accepted(t, ln)
			v := c.Check(server, client)
			t.Log(v.Reason)
			assert.Equal(t, confined, v.Refused, v.Reason)
			assert.Equal(t, cl.pid, v.PID)
			if confined {
				assert.Contains(t, v.Reason, fmt.Sprintf("inside the cordon sandbox of pid %d", os.Getpid()))
			}
		})
	}
}

// /proc/net/tcp and tcp6, read where sock_diag is missing, find the same
// sockets sock_diag finds.
func TestProcNetAgreesWithSockDiag(t *testing.T) {
	for _, c := range []struct{ listen, dial, opt string }{
		{"127.0.0.1:0", "127.0.0.1", ""},
		{"[::1]:0", "::1", ""},
		{"[::]:0", "127.0.0.1", ""},
		{"[::]:0", "127.0.0.1", "mapped6"},
	} {
		t.Run(c.listen+"/"+c.dial+c.opt, func(t *testing.T) {
			ln := listen(t, c.listen)
			addr := netip.AddrPortFrom(netip.MustParseAddr(c.dial), uint16(ln.Addr().(*net.TCPAddr).Port)).String()
			argv := connectArgv(t, addr)
			if c.opt != "" {
				argv = append(argv, c.opt)
			}
			start(t, argv...)
			server, client := accepted(t, ln)
			sk, found, err := sockDiag(server, client)
			require.NoError(t, err)
			require.True(t, found)
			require.NotZero(t, sk.ino)
			assert.Equal(t, uint32(os.Geteuid()), sk.uid)
			sk2, found, err := procNet(server, client)
			require.NoError(t, err)
			require.True(t, found)
			assert.Equal(t, sk, sk2)
			// The server's own end is not the client's.
			ssk, found, err := sockDiag(client, server)
			require.NoError(t, err)
			require.True(t, found)
			assert.NotEqual(t, sk.ino, ssk.ino)
		})
	}
}

func TestHexAddr(t *testing.T) {
	if !isLittleEndian() {
		t.Skip("the expectations are written for a little-endian machine")
	}
	assert.Equal(t, "0100007F:1F90", hexAddr4(netip.MustParseAddr("127.0.0.1"), 8080))
	assert.Equal(t, "00000000000000000000000001000000:0016", hexAddr6(netip.MustParseAddr("::1"), 22))
	assert.Equal(t, "0000000000000000FFFF00000100007F:0050", hexAddr6(netip.MustParseAddr("::ffff:127.0.0.1"), 80))
}

func isLittleEndian() bool { return binary.NativeEndian.Uint16([]byte{1, 0}) == 1 }

// A command name with spaces and parentheses does not shift the fields
// of /proc/PID/stat.
func TestStatOfOddCommandName(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", `printf 'x) 1 (y) 2' > /proc/self/comm && echo ready $$ && read x`)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { stdin.Close(); cmd.Wait() }()
	l, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, l, "ready")
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", cmd.Process.Pid))
	require.NoError(t, err)
	require.Equal(t, "x) 1 (y) 2\n", string(comm), "the name really is odd")
	listed := false
	s, err := takeSnapshot(func(_ *snapshot, pid int, argv []byte) {
		listed = listed || pid == cmd.Process.Pid
	})
	require.NoError(t, err)
	defer s.close()
	assert.True(t, listed)
	p, err := s.statAt(s.dir, strconv.Itoa(cmd.Process.Pid)+"/stat", cmd.Process.Pid)
	require.NoError(t, err)
	assert.Equal(t, os.Getpid(), p.ppid)
	assert.False(t, p.kthread)
	assert.NotZero(t, p.start)
}

func TestParseStat(t *testing.T) {
	p, err := parseStat(7, []byte("7 (a) b (c)) S 1 7 7 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0\n"))
	require.NoError(t, err)
	assert.Equal(t, proc{pid: 7, ppid: 1, start: 12345}, p)
	p, err = parseStat(2, []byte("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 3 0 0"))
	require.NoError(t, err)
	assert.True(t, p.kthread)
	_, err = parseStat(9, []byte("9 (truncated"))
	assert.Error(t, err)
}

func TestHasArg(t *testing.T) {
	argv := []byte("/usr/bin/bwrap\x00--ro-bind\x00/\x00/\x00--\x00/proc/self/fd/3\x00__sandbox-helper\x00--\x00sh\x00")
	assert.True(t, hasArg(argv, []byte("__sandbox-helper")))
	assert.False(t, hasArg(argv, []byte("__sandbox")))
	assert.False(t, hasArg([]byte("echo\x00x__sandbox-helper\x00"), []byte("__sandbox-helper")))
	assert.True(t, hasArg([]byte("a\x00__sandbox-helper"), []byte("__sandbox-helper")), "no final NUL (a rewritten argv)")
}

// A command line may hold a secret (curl -H "Authorization: Bearer …"):
// only the program is named, and nothing unprintable.
func TestCommandNamesTheProgramOnly(t *testing.T) {
	assert.Equal(t, "/usr/bin/curl …", command([]byte("/usr/bin/curl\x00-H\x00Authorization: Bearer s3cret\x00")))
	assert.Equal(t, "sleep", command([]byte("sleep\x00")))
	assert.Equal(t, "a?[8mb …", command([]byte("a\x1b[8mb\x00x")))
	assert.Equal(t, "", command(nil))
}

// Another user's sandbox, whose descriptors this user cannot read, is no
// reason to refuse this user's clients. TestAsNobody runs it as nobody,
// with the sandbox of another user (uid 65532) made non-dumpable.
func TestOtherUsersSandboxIgnored(t *testing.T) {
	mark := os.Getenv("PEER_TEST_FOREIGN_MARK")
	if mark == "" {
		t.Skip("run by TestAsNobody")
	}
	ln := listen(t, "127.0.0.1:0")
	cl := start(t, connectArgv(t, ln.Addr().String())...)
	server, client := accepted(t, ln)
	v := checker(t, mark).Check(server, client)
	t.Log(v.Reason)
	assert.False(t, v.Refused, v.Reason)
	assert.Equal(t, cl.pid, v.PID)

	// Its own sandboxes, made non-dumpable, still refuse.
	ln = listen(t, "127.0.0.1:0")
	sandbox(t, mark, connectArgv(t, ln.Addr().String(), "nondumpable")...)
	server, client = accepted(t, ln)
	v = checker(t, mark).Check(server, client)
	assert.True(t, v.Refused, v.Reason)
}

// TestAsNobody runs the tests whose outcome depends on privilege as an
// unprivileged user: then a non-dumpable process's descriptors cannot be
// read, and other users' processes cannot be looked at.
func TestAsNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to become nobody")
	}
	if os.Getenv("PEER_TEST_NOBODY") != "" {
		t.Skip("already nobody")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		testenv.SkipUnlessCI(t, "no setpriv")
	}
	dir, err := os.MkdirTemp("/var/tmp", "peer-nobody-")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := dir + "/peer.test"
	b, err := os.ReadFile(self(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	// Another user's sandbox, not dumpable, that holds nothing.
	foreign := marker(t)
	start(t, setpriv, "--reuid=65532", "--regid=65532", "--clear-groups", "--", bin, "peer-test-root", foreign, "--",
		bin, "peer-test-connect", listen(t, "127.0.0.1:0").Addr().String(), "nondumpable")
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", bin, "-test.v", "-test.count=1",
		"-test.run", "^(TestOwnHelperPassedOver|TestStartingSandboxPassedOver|TestNonDumpableRefused|TestOrdinaryClientAllowed|TestSandboxedClientRefused|TestThreadOwnTableRefused|TestIPv4MappedClients|TestOtherUsersSandboxIgnored)$")
	cmd.Env = append(os.Environ(), "PEER_TEST_NOBODY=1", "TMPDIR=/tmp", "HOME=/", "GORACE=atexit_sleep_ms=0", "PEER_TEST_FOREIGN_MARK="+foreign)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	t.Logf("as nobody:\n%s", out)
	require.NoError(t, err)
	assert.Contains(t, string(out), "--- PASS: TestNonDumpableRefused")
	assert.Contains(t, string(out), "--- PASS: TestOtherUsersSandboxIgnored")
	assert.Contains(t, string(out), "--- PASS: TestOwnHelperPassedOver")
	assert.Contains(t, string(out), "--- PASS: TestStartingSandboxPassedOver")
	assert.NotContains(t, string(out), "SKIP")
}

// A non-root cordon cannot read its own helpers' descriptors (they are
// non-dumpable): registered, they are passed over and an ordinary client is
// served; a non-dumpable process that was not registered is still refused.
// Its outcome depends on privilege: TestAsNobody runs it as nobody.
func TestOwnHelperPassedOver(t *testing.T) {
	mark := marker(t)
	helper := sandbox(t, mark, self(t), "peer-test-helper")
	check := func() Verdict {
		ln := listen(t, "127.0.0.1:0")
		start(t, connectArgv(t, ln.Addr().String())...)
		server, client := accepted(t, ln)
		return checker(t, mark).Check(server, client)
	}
	if os.Geteuid() != 0 {
		v := check()
		assert.True(t, v.Refused, "an unregistered non-dumpable helper: %s", v.Reason)
		assert.Contains(t, v.Reason, "non-dumpable")
	}
	release := RegisterHelpers(helper.cmd.Process.Pid)
	defer release()
	v := check()
	assert.False(t, v.Refused, v.Reason)

	// A process that made itself non-dumpable after the registration, in a
	// sandbox of the same marker, holding the client's socket.
	ln := listen(t, "127.0.0.1:0")
	sb := sandbox(t, mark, connectArgv(t, ln.Addr().String(), "nondumpable")...)
	server, client := accepted(t, ln)
	v = checker(t, mark).Check(server, client)
	assert.True(t, v.Refused, v.Reason)
	assert.Equal(t, sb.pid, v.PID, v.Reason)

	// Released, the helper counts against clients again.
	release()
	if os.Geteuid() != 0 {
		v := check()
		assert.True(t, v.Refused, v.Reason)
	}
}

// A sandbox registered as starting passes whole (nothing of a command runs
// there yet); once ready, only the processes then present do; released,
// none. Its outcome depends on privilege: TestAsNobody runs it as nobody.
func TestStartingSandboxPassedOver(t *testing.T) {
	mark := marker(t)
	root := sandbox(t, mark, self(t), "peer-test-helper")
	check := func() Verdict {
		ln := listen(t, "127.0.0.1:0")
		start(t, connectArgv(t, ln.Addr().String())...)
		server, client := accepted(t, ln)
		return checker(t, mark).Check(server, client)
	}
	ready, release := RegisterStarting(root.cmd.Process.Pid)
	defer release()
	v := check()
	assert.False(t, v.Refused, "starting: %s", v.Reason)
	ready()
	v = check()
	assert.False(t, v.Refused, "ready: %s", v.Reason)
	release()
	if os.Geteuid() != 0 {
		v = check()
		assert.True(t, v.Refused, "released: %s", v.Reason)
	}
}
