package helper

import (
	"fmt"
	"net"
	"os"
	"os/exec"

	"github.com/cordonhq/cordon/internal/netjoin"
	"golang.org/x/sys/unix"
)

// BridgeArg, after Arg, runs the egress bridge instead of a command.
const BridgeArg = "--egress-bridge"

// startBridge offers the egress proxy's unix socket on 127.0.0.1:port
// inside bwrap's network namespace, where nothing else is reachable. The
// listener is made here, before the command starts, so that its first
// connection queues rather than fails; a child re-executed from this
// binary serves it (the helper itself becomes the command). It lives in
// the sandbox's pid namespace and ends with it.
func startBridge(port int, socket string) error {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("egress bridge: %w", err)
	}
	f, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		return fmt.Errorf("egress bridge: %w", err)
	}
	defer f.Close()
	cmd := exec.Command("/proc/self/exe", Arg, BridgeArg, socket)
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("egress bridge: %w", err)
	}
	return nil
}

// RunBridge serves the listener on fd 3: each connection is joined to a
// new connection to the proxy's socket. It never returns.
func RunBridge(socket string) {
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
	ln, err := net.FileListener(os.NewFile(3, "egress"))
	if err != nil {
		bridgeFail(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(0)
		}
		go func() {
			u, err := net.Dial("unix", socket)
			if err != nil {
				c.Close()
				return
			}
			netjoin.Join(c, u)
			c.Close()
			u.Close()
		}()
	}
}

func bridgeFail(err error) {
	fmt.Fprintf(os.Stderr, "cordon: egress bridge: %v\n", err)
	os.Exit(125)
}
