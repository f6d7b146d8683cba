package egress

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProxyServesItsOwnCommandOnly: with a token, a client on the loopback
// port that does not present it — over HTTP, CONNECT or SOCKS5 — gets a
// 407 or a refused handshake and reaches nothing, and one that presents it
// (curl with the credentials in its proxy URL, as cordon sets them) is
// served; a client of the unix socket in cordon's own pid namespace (a
// process of the host, a Landlock sandbox's command) is not served at
// all: only bwrap's bridge, in a namespace below, is.
func TestProxyServesItsOwnCommandOnly(t *testing.T) {
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
	curl := func(proxy string) string {
		out, _ := exec.Command("curl", "-sS", "-i", "--max-time", "20", "--proxy", proxy, srv.URL).CombinedOutput()
		return string(out)
	}
	at := fmt.Sprintf("127.0.0.1:%d", p.Port())
	for _, proxy := range []string{"http://" + at, "http://cordon:wrong@" + at, "socks5h://" + at, "socks5h://cordon:wrong@" + at} {
		out := curl(proxy)
		assert.NotContains(t, out, "reached", "%s: %s", proxy, out)
		if strings.HasPrefix(proxy, "http:") {
			assert.Contains(t, out, "407", "%s: %s", proxy, out)
		}
	}
	assert.Zero(t, hits.Load(), "a client without the token reached the host")
	for _, proxy := range []string{"http://cordon:tok-123@" + at, "socks5h://cordon:tok-123@" + at} {
		assert.Contains(t, curl(proxy), "reached", proxy)
	}

	// The socket, from this process: cordon's own pid namespace.
	c, err := net.Dial("unix", sock)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "GET %s/ HTTP/1.1\r\nHost: %s\r\n\r\n", srv.URL, srv.Listener.Addr())
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, _ := c.Read(make([]byte, 1))
	assert.Zero(t, n, "a host process was served on the socket")

	// A process in a pid namespace of its own making (unshare -Urp, which
	// a Landlock command may run) that does not descend from the call's
	// process is not served either.
	other := exec.Command("sleep", "60")
	require.NoError(t, other.Start())
	defer other.Process.Kill()
	p.ServeTree(other.Process.Pid)
	nested := exec.Command("unshare", "-Urpf", "socat", "-d", "-d", "-t", "5", "-", "UNIX-CONNECT:"+sock) // -t: the answer's wait after the request
	nested.Stdin = strings.NewReader(fmt.Sprintf("GET %s/ HTTP/1.1\r\nHost: %s\r\n\r\n", srv.URL, srv.Listener.Addr()))
	var log strings.Builder
	nested.Stderr = &log
	out, _ := nested.Output() // refused, socat's write may fail
	require.Contains(t, log.String(), "successfully connected", "the attempt must reach the socket")
	assert.Empty(t, string(out), "a process in its own pid namespace was served")
	assert.Equal(t, int32(2), hits.Load())
}
