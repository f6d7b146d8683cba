package egress

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProxySocketRefusesAHostProcessInItsOwnPidNamespace: the unix socket
// serves only bwrap's bridge, told by its NSpid having more levels than
// cordon's. But any process of the host — a Landlock sandbox's command
// (seccomp lets it unshare; under network allow it may make unix sockets),
// or any unprivileged process — can make a user and pid namespace of its
// own (`unshare -Urp --fork`) and connect from there: its NSpid has two
// levels too. It must not be served.
func TestProxySocketRefusesAHostProcessInItsOwnPidNamespace(t *testing.T) {
	if _, err := exec.LookPath("socat"); err != nil {
		testenv.SkipUnlessCI(t, "socat is not installed")
	}
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "reached")
	}))
	t.Cleanup(srv.Close)
	sock := filepath.Join(t.TempDir(), "s")
	p, err := Start(Config{Rules: Rules{Allowed: []string{fmt.Sprintf("127.0.0.1:%d", port(srv.URL))}}, Token: "tok-123"}, sock)
	require.NoError(t, err)
	t.Cleanup(p.Close)

	// What `unshare -Urp --fork socat - UNIX-CONNECT:sock` does: no
	// privilege needed, only user namespaces, which are on by default.
	cmd := exec.Command("socat", "-d", "-d", "-t", "20", "-", "UNIX-CONNECT:"+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	cmd.Stdin = strings.NewReader(fmt.Sprintf("GET %s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", srv.URL, srv.Listener.Addr()))
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(out), "Operation not permitted") {
		testenv.SkipUnlessCI(t, "no user namespaces here: "+string(out))
	}
	require.Contains(t, string(out), "successfully connected", "the attack must reach the socket: %s", out)
	assert.NotContains(t, string(out), "reached", "a host process in a pid namespace of its own making was served on the socket without the token")
	assert.Zero(t, hits.Load(), "a host process in a pid namespace of its own making reached the host through the socket")
}

// TestProxySocketTakesTheCredentialsItsVariablesCarry: under bwrap the
// command's ALL_PROXY carries socks5h://cordon:TOKEN@..., and bwrap's
// bridge relays its bytes to the unix socket as they are. A SOCKS5 client
// that, given credentials, offers only the username/password method
// (httpcore, behind httpx, does: one method, the one it has) gets "no
// acceptable method" (05 FF) from the socket, whose SOCKS server knows only
// "no authentication": the token the variables now carry breaks it.
func TestProxySocketTakesTheCredentialsItsVariablesCarry(t *testing.T) {
	if _, err := exec.LookPath("socat"); err != nil {
		testenv.SkipUnlessCI(t, "socat is not installed")
	}
	sock := filepath.Join(t.TempDir(), "s")
	p, err := Start(Config{Token: "tok-123"}, sock)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	// bwrap's bridge: a process in a pid namespace below this one.
	cmd := exec.Command("socat", "-t", "20", "-", "UNIX-CONNECT:"+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	// Greeting: version 5, one method, username/password (2).
	cmd.Stdin = strings.NewReader("\x05\x01\x02")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		testenv.SkipUnlessCI(t, "no user namespaces here: "+err.Error())
	}
	p.ServeTree(cmd.Process.Pid) // the call's process, as the sandbox's bridge descends from it
	cmd.Wait()
	assert.Equal(t, "\x05\x02", out.String(), "the socket refused the SOCKS5 username/password method the proxy variables ask for")
}
