package egress

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The proxy's cost is measured against its floor in the same run: the
// same connection or transfer made directly on loopback. The metrics are
// the difference (overhead-µs/conn: SPEC's budget is under 1000) and the
// ratio (proxied-%-of-direct: at least 80).

// BenchmarkProxyHTTPSConnect: one TLS connection to a loopback server,
// directly and through CONNECT, alternating so both see the same machine.
func BenchmarkProxyHTTPSConnect(b *testing.B) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes cut short at Close
	srv.StartTLS()
	defer srv.Close()
	target := srv.Listener.Addr().String()
	host, _, _ := net.SplitHostPort(target)
	p, err := Start(Config{Rules: Rules{Allowed: []string{host}}}, "")
	require.NoError(b, err)
	defer p.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", p.Port())
	conf := &tls.Config{InsecureSkipVerify: true}
	handshake := func(c net.Conn) {
		tc := tls.Client(c, conf)
		if err := tc.Handshake(); err != nil {
			b.Fatal(err)
		}
		tc.Close()
	}
	var direct, proxied time.Duration
	for b.Loop() {
		t0 := time.Now()
		c, err := net.Dial("tcp", target)
		require.NoError(b, err)
		handshake(c)
		direct += time.Since(t0)

		t1 := time.Now()
		c, br := tunnel(b, proxyAddr, target)
		handshake(&bufferedConn{Conn: c, r: br})
		proxied += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(direct.Microseconds())/n, "direct-µs/conn")
	b.ReportMetric(float64(proxied.Microseconds())/n, "proxied-µs/conn")
	b.ReportMetric(float64((proxied-direct).Microseconds())/n, "overhead-µs/conn")
}

// BenchmarkProxyTransfer: 100 MB from a loopback server, directly and
// through the proxy (CONNECT, then raw bytes).
func BenchmarkProxyTransfer(b *testing.B) {
	const size = 100 << 20
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	defer ln.Close()
	chunk := make([]byte, 256<<10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for sent := 0; sent < size; sent += len(chunk) {
					if _, err := c.Write(chunk); err != nil {
						return
					}
				}
			}()
		}
	}()
	target := ln.Addr().String()
	p, err := Start(Config{Rules: Rules{Allowed: []string{"127.0.0.1"}}}, "")
	require.NoError(b, err)
	defer p.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", p.Port())
	// Both sides read as a download client does, in large blocks (curl
	// and pip use 100+ KiB); the same reader for the floor and the proxy.
	buf := make([]byte, 256<<10)
	drain := func(r io.Reader) {
		n, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, struct{ io.Reader }{r}, buf)
		require.NoError(b, err)
		require.EqualValues(b, size, n)
	}
	b.SetBytes(2 * size)
	var direct, proxied time.Duration
	for b.Loop() {
		t0 := time.Now()
		c, err := net.Dial("tcp", target)
		require.NoError(b, err)
		drain(c)
		c.Close()
		direct += time.Since(t0)

		t1 := time.Now()
		c, br := tunnel(b, proxyAddr, target)
		drain(br)
		c.Close()
		proxied += time.Since(t1)
	}
	b.ReportMetric(100*direct.Seconds()/proxied.Seconds(), "proxied-%-of-direct")
}

// tunnel opens a CONNECT tunnel to target through the proxy; what follows
// the 200 is read through the returned reader.
func tunnel(b *testing.B, proxyAddr, target string) (net.Conn, *bufio.Reader) {
	c, err := net.Dial("tcp", proxyAddr)
	require.NoError(b, err)
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(b, err)
	require.Equal(b, 200, resp.StatusCode)
	return c, br
}

// BenchmarkProxyTransferCurl is BenchmarkProxyTransfer in the shape it has
// in use: curl (the confined command) downloads 100 MB over plain HTTP
// from a server in a process of its own, directly and through the proxy
// (curl -x, absolute URI), so that the proxy is the only party in this
// process. Both runs use the same curl and server.
func BenchmarkProxyTransferCurl(b *testing.B) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		b.Skip("needs curl")
	}
	const size = 100 << 20
	srv := exec.Command(os.Args[0], "-test.run", "^TestTransferServer$")
	srv.Env = append(os.Environ(), "EGRESS_TRANSFER_SERVER="+strconv.Itoa(size))
	out, err := srv.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, srv.Start())
	defer func() { srv.Process.Kill(); srv.Wait() }()
	addr, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(b, err)
	url := "http://" + strings.TrimSpace(addr) + "/blob"
	p, err := Start(Config{Rules: Rules{Allowed: []string{"127.0.0.1"}}}, "")
	require.NoError(b, err)
	defer p.Close()
	proxy := fmt.Sprintf("http://127.0.0.1:%d", p.Port())
	get := func(url string, args ...string) time.Duration {
		t0 := time.Now()
		cmd := exec.Command(curl, append([]string{"-sS", "--fail", "-o", "/dev/null", "-w", "%{size_download}"}, append(args, url)...)...)
		cmd.Env = []string{"PATH=/usr/bin:/bin"} // no proxy variables of this machine's
		got, err := cmd.Output()
		require.NoError(b, err)
		require.Equal(b, strconv.Itoa(size), string(got))
		return time.Since(t0)
	}
	// The peer: socat, a relay that only copies bytes between two
	// sockets, which puts the same third party on the path as the proxy.
	relayURL := ""
	if socat, err := exec.LookPath("socat"); err == nil {
		port := freePort(b)
		relay := exec.Command(socat, "-b", "262144", "TCP-LISTEN:"+port+",bind=127.0.0.1,reuseaddr,fork", "TCP:"+strings.TrimSpace(addr))
		require.NoError(b, relay.Start())
		defer func() { relay.Process.Kill(); relay.Wait() }()
		waitListening(b, "127.0.0.1:"+port)
		relayURL = "http://127.0.0.1:" + port + "/blob"
	} else {
		b.Log("no socat: the relay peer is not measured (CI installs it)")
	}
	// A CONNECT tunnel (what every HTTPS download takes; -p asks for one
	// for plain HTTP too), and a plain-HTTP request the proxy forwards.
	for _, via := range []struct {
		name  string
		proxy []string
	}{{"connect", []string{"-p", "-x", proxy}}, {"forward", []string{"-x", proxy}}} {
		b.Run(via.name, func(b *testing.B) {
			b.SetBytes(2 * size)
			var direct, proxied, relayed time.Duration
			for b.Loop() {
				direct += get(url, "--noproxy", "*")
				proxied += get(url, via.proxy...)
				if relayURL != "" {
					relayed += get(relayURL, "--noproxy", "*")
				}
			}
			b.ReportMetric(100*direct.Seconds()/proxied.Seconds(), "proxied-%-of-direct")
			if relayURL != "" {
				b.ReportMetric(100*direct.Seconds()/relayed.Seconds(), "socat-%-of-direct")
				b.ReportMetric(100*relayed.Seconds()/proxied.Seconds(), "proxied-%-of-socat")
			}
		})
	}
}

// freePort is a loopback port nothing listens on (a benchmark's peer
// takes it a moment later).
func freePort(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// waitListening waits until something accepts connections on addr.
func waitListening(b *testing.B, addr string) {
	for range 200 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.Fatalf("nothing listens on %s", addr)
}

// TestTransferServer is BenchmarkProxyTransferCurl's server when run as
// its child: it serves EGRESS_TRANSFER_SERVER bytes at every URL and
// prints its address.
func TestTransferServer(t *testing.T) {
	size, err := strconv.Atoi(os.Getenv("EGRESS_TRANSFER_SERVER"))
	if err != nil {
		t.Skip("the benchmark's child")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	fmt.Println(ln.Addr())
	chunk := make([]byte, 256<<10)
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
}
