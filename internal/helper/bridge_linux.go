package helper

import (
	"fmt"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"
)

// BridgeArg, after Arg, runs the egress bridge instead of a command.
const BridgeArg = "--egress-bridge"

// The bridge uses raw sockets rather than package net: linking net alone
// adds over a millisecond to the start-up of every confined command, and
// this binary is the helper of all of them (BenchmarkConfineExecTrue/helper-alone in sandbox/).

// startBridge offers the egress proxy's unix socket on 127.0.0.1:port
// inside bwrap's network namespace, where nothing else is reachable. The
// listener is made here, before the command starts, so that its first
// connection queues rather than fails; a child re-executed from this
// binary serves it (the helper itself becomes the command). It lives in
// the sandbox's pid namespace and ends with it.
func startBridge(port int, socket string, capture bool) error {
	fd, err := listenTCP4([4]byte{127, 0, 0, 1}, port)
	if err != nil {
		return fmt.Errorf("egress bridge: listening on 127.0.0.1:%d: %w", port, err)
	}
	f := os.NewFile(uintptr(fd), "egress-listener")
	defer f.Close()
	cmd := exec.Command("/proc/self/exe", Arg, BridgeArg, socket)
	cmd.ExtraFiles = []*os.File{f}
	if capture {
		// Transparent capture (capture_linux.go), in the network
		// namespace isolateNet made, where these ports can be bound.
		fds, err := listenCapture()
		if err != nil {
			return fmt.Errorf("egress bridge: %w", err)
		}
		for _, fd := range fds {
			cf := os.NewFile(uintptr(fd), "capture-listener")
			defer cf.Close()
			cmd.ExtraFiles = append(cmd.ExtraFiles, cf)
		}
		cmd.Args = append(cmd.Args, CaptureArg)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("egress bridge: %w", err)
	}
	return nil
}

func listenTCP4(addr [4]byte, port int) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: addr}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// RunBridge serves the listener on fd 3: each connection is joined to a
// new connection to the proxy's socket. It never returns.
func RunBridge(socket string, capture bool) {
	// The bridge runs beside the command, outside its seccomp filter: it
	// keeps no capability, and is not dumpable, so that the command cannot
	// reach into it through /proc/PID/mem or /proc/PID/fd and use it to
	// open what the filter refuses.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		bridgeFail(err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		bridgeFail(err)
	}
	if err := dropCapabilities(); err != nil {
		bridgeFail(err)
	}
	if capture {
		serveCapture(socket)
	}
	const listener = 3
	unix.CloseOnExec(listener)
	for {
		c, _, err := unix.Accept4(listener, unix.SOCK_CLOEXEC)
		switch err {
		case nil:
		case unix.EINTR, unix.ECONNABORTED:
			continue
		case unix.EMFILE, unix.ENFILE, unix.ENOBUFS, unix.ENOMEM:
			// Out of descriptors or memory, for now: the command may
			// have opened many connections. Egress must not end for
			// the rest of the call because of it.
			time.Sleep(50 * time.Millisecond)
			continue
		default:
			os.Exit(0)
		}
		go func() {
			u, err := dialUnix(socket)
			if err != nil {
				unix.Close(c)
				return
			}
			joinFDs(c, u)
		}()
	}
}

func dialUnix(path string) (int, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for {
		err = unix.Connect(fd, &unix.SockaddrUnix{Name: path})
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

func bridgeFail(err error) {
	fmt.Fprintf(os.Stderr, "cordon: egress bridge: %v\n", err)
	os.Exit(125)
}
