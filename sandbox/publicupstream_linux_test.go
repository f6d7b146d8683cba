package sandbox

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// publicListener listens on port 443 of an address no name of this
// machine leads to, as a real API's is: the far end of a veth pair, in a
// network namespace of its own, in TEST-NET-2 (198.51.100.0/24, which the
// egress proxy takes for a public address). The proxy refuses a name that
// leads to this machine, and transparent capture carries ports 80 and 443
// only, so a server on loopback cannot stand in for one. Each test process
// takes a /30 of its own.
func publicListener(t *testing.T) (net.Listener, netip.Addr) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.SkipUnlessCI(t, "a network namespace with a veth pair needs root")
	}
	pid := os.Getpid()
	ns, hostIf, nsIf := fmt.Sprintf("cordon-up-%d", pid), fmt.Sprintf("cuh%d", pid%1000000), fmt.Sprintf("cun%d", pid%1000000)
	base := 4 * (1 + pid%62)
	hostAddr, nsAddr := fmt.Sprintf("198.51.100.%d", base+1), fmt.Sprintf("198.51.100.%d", base+2)
	ip := func(args ...string) {
		t.Helper()
		out, err := exec.Command("ip", args...).CombinedOutput()
		require.NoError(t, err, "ip %v: %s", args, out)
	}
	ip("netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	ip("link", "add", hostIf, "type", "veth", "peer", "name", nsIf, "netns", ns)
	t.Cleanup(func() { exec.Command("ip", "link", "del", hostIf).Run() })
	ip("addr", "add", hostAddr+"/30", "dev", hostIf)
	ip("link", "set", hostIf, "up")
	ip("-n", ns, "addr", "add", nsAddr+"/30", "dev", nsIf)
	ip("-n", ns, "link", "set", nsIf, "up")
	type result struct {
		ln  net.Listener
		err error
	}
	done := make(chan result)
	go func() {
		// The thread enters the namespace and is never unlocked: Go ends
		// it with the goroutine, and no other goroutine runs there. The
		// socket keeps the namespace it was made in.
		runtime.LockOSThread()
		f, err := os.Open("/run/netns/" + ns)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- result{err: fmt.Errorf("setns: %w", err)}
			return
		}
		ln, err := net.Listen("tcp", nsAddr+":443")
		done <- result{ln, err}
	}()
	r := <-done
	require.NoError(t, r.err)
	return r.ln, netip.MustParseAddr(nsAddr)
}
