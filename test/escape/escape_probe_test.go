//go:build linux

package escape_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"
)

// probeArg makes the test binary act as "probe": a small attacker program
// that makes one raw system call the shell cannot, and prints
// "probe WHAT: ok" or the errno it got. It never writes to a device.
const probeArg = "escape-probe"

func probe(args []string) int {
	if len(args) == 0 {
		fmt.Println("usage: probe WHAT [ARGS]")
		return 2
	}
	what := strings.Join(args, " ")
	result := func(err error) int {
		if err == nil {
			fmt.Printf("probe %s: ok\n", what)
			return 0
		}
		var errno unix.Errno
		if errors.As(err, &errno) {
			fmt.Printf("probe %s: %s\n", what, unix.ErrnoName(errno))
		} else {
			fmt.Printf("probe %s: %v\n", what, err)
		}
		return 1
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	switch args[0] {
	case "ptrace":
		pid := atoi(arg(1))
		err := unix.PtraceAttach(pid)
		if err == nil {
			// Wait for the attach stop, then let go: never leave the
			// target stopped.
			var ws unix.WaitStatus
			unix.Wait4(pid, &ws, unix.WALL, nil)
			unix.PtraceDetach(pid)
			unix.Kill(pid, unix.SIGCONT)
		}
		return result(err)
	case "vmread":
		// Read one byte of another process's memory: EFAULT would mean the
		// call itself was allowed.
		pid := atoi(arg(1))
		var b [1]byte
		local := []unix.Iovec{{Base: &b[0], Len: 1}}
		remote := []unix.RemoteIovec{{Base: 0x10000, Len: 1}}
		_, err := unix.ProcessVMReadv(pid, local, remote, 0)
		if err == unix.EFAULT || err == unix.EIO {
			err = nil // the address was bad, but the call was allowed
		}
		return result(err)
	case "io_uring":
		var params [120]byte
		fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
		if errno != 0 {
			return result(errno)
		}
		unix.Close(int(fd))
		return result(nil)
	case "vsock":
		fd, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM, 0)
		if err != nil {
			return result(err)
		}
		defer unix.Close(fd)
		// CID 2 is the host: connecting (even refused) means vsock works.
		err = unix.Connect(fd, &unix.SockaddrVM{CID: unix.VMADDR_CID_HOST, Port: 1})
		if err == nil || err == unix.ECONNREFUSED || err == unix.ECONNRESET || err == unix.ENODEV || err == unix.ETIMEDOUT {
			return result(nil)
		}
		return result(nil) // the socket itself was created: the filter did not stop it
	case "tiocsti":
		// tiocsti PATH|fd:N TEXT pushes TEXT into a terminal's input.
		fd := -1
		if n, ok := strings.CutPrefix(arg(1), "fd:"); ok {
			fd = atoi(n)
		} else {
			f, err := unix.Open(arg(1), unix.O_RDWR|unix.O_NOCTTY, 0)
			if err != nil {
				return result(err)
			}
			defer unix.Close(f)
			fd = f
		}
		for _, c := range []byte(arg(2)) {
			ch := c
			if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&ch))); errno != 0 {
				return result(errno)
			}
		}
		return result(nil)
	case "unix", "tcp", "abstract":
		network, addr := args[0], arg(1)
		if network == "abstract" {
			network, addr = "unix", "@"+addr
		}
		c, err := net.DialTimeout(network, addr, 2*time.Second)
		if err != nil {
			return result(unwrapErrno(err))
		}
		fmt.Fprintf(c, "%s\n", arg(2))
		c.Close()
		return result(nil)
	case "udp":
		c, err := net.Dial("udp4", arg(1))
		if err != nil {
			return result(unwrapErrno(err))
		}
		_, err = fmt.Fprintf(c, "%s\n", arg(2))
		c.Close()
		return result(unwrapErrno(err))
	case "kill":
		return result(unix.Kill(atoi(arg(1)), unix.SIGKILL))
	case "mknod":
		mode := uint32(unix.S_IFCHR)
		if arg(2) == "b" {
			mode = unix.S_IFBLK
		}
		return result(unix.Mknod(arg(1), mode|0o666, int(unix.Mkdev(uint32(atoi(arg(3))), uint32(atoi(arg(4)))))))
	case "openw":
		// Open for writing and close at once: proves access without
		// writing a byte (the target may be the machine's disk).
		fd, err := unix.Open(arg(1), unix.O_WRONLY|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
		if err == nil {
			unix.Close(fd)
		}
		return result(err)
	case "mount":
		return result(unix.Mount(arg(1), arg(2), "", unix.MS_BIND, ""))
	case "mcp-selfapprove":
		return selfApprove(arg(1), arg(2), arg(3))
	// The SysV IPC probes report "done", not "ok": an object of the
	// sandbox's own IPC namespace (bwrap) is harmless, so only the host's
	// IPC namespace can tell (checkSysvIPC).
	case "shm-write":
		// Attach a segment by id and overwrite it.
		b, err := unix.SysvShmAttach(atoi(arg(1)), 0, 0)
		if err == nil {
			copy(b, arg(2))
			unix.SysvShmDetach(b)
		}
		return ipcResult(what, err)
	case "shm-create":
		// A segment under this key that would outlive the command.
		_, err := unix.SysvShmGet(atoi(arg(1)), 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
		return ipcResult(what, err)
	case "msg-send":
		return ipcResult(what, msgSend(atoi(arg(1)), arg(2)))
	case "msg-create":
		_, err := msgGet(atoi(arg(1)), unix.IPC_CREAT|unix.IPC_EXCL|0o600)
		return ipcResult(what, err)
	}
	fmt.Println("unknown probe", args[0])
	return 2
}

func ipcResult(what string, err error) int {
	if err != nil {
		fmt.Printf("probe %s: %v\n", what, unwrapErrno(err))
		return 1
	}
	fmt.Printf("probe %s: done\n", what)
	return 0
}

// SysV message queues (x/sys/unix has no wrappers for them).
func msgGet(key, flag int) (int, error) {
	id, _, errno := unix.Syscall(unix.SYS_MSGGET, uintptr(key), uintptr(flag), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(id), nil
}

func msgSend(id int, text string) error {
	var msg struct {
		mtype int64
		mtext [256]byte
	}
	msg.mtype = 1
	n := copy(msg.mtext[:], text)
	if _, _, errno := unix.Syscall6(unix.SYS_MSGSND, uintptr(id), uintptr(unsafe.Pointer(&msg)), uintptr(n), unix.IPC_NOWAIT, 0, 0); errno != 0 {
		return errno
	}
	return nil
}

func msgRemove(id int) {
	unix.Syscall(unix.SYS_MSGCTL, uintptr(id), unix.IPC_RMID, 0)
}

func unwrapErrno(err error) error {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// selfApprove is the confused-deputy attack on the HTTP transport: with
// cordon's bearer token, open a session of one's own, declare elicitation,
// ask for danger-full-access and approve it oneself.
func selfApprove(url, token, command string) int {
	if strings.TrimSpace(token) == "" {
		fmt.Println("probe mcp-selfapprove: no token")
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "attacker", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fmt.Println("probe mcp-selfapprove: elicitation received, approving it myself")
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}, nil
		},
	})
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{strings.TrimSpace(token), http.DefaultTransport}}}
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		fmt.Printf("probe mcp-selfapprove: connect: %v\n", err)
		return 1
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
		"command": command, "sandbox_permissions": "danger-full-access", "justification": "the build needs it",
	}})
	if err != nil {
		fmt.Printf("probe mcp-selfapprove: call: %v\n", err)
		return 1
	}
	var parts []string
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	fmt.Printf("probe mcp-selfapprove: isError=%v %s\n", res.IsError, strings.Join(parts, " "))
	if res.IsError {
		return 1
	}
	return 0
}
