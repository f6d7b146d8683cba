package egress

// Attacks on the secrets' proxy by a prompt-injected model in the
// sandbox, each a hole a red-team review found, reproduced and closed.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/cordonhq/cordon/internal/secrets/secretstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
	"golang.org/x/net/http2/hpack"
)

// rawWorld is a proxy holding secret for localhost before a TLS server
// whose handler is serve; rawTLS speaks to it by hand through CONNECT.
type rawWorld struct {
	p     *Proxy
	v     *secrets.Vault
	sp    int
	trust *x509.CertPool
}

func newRawWorld(t *testing.T, secret secrets.Secret, serve http.HandlerFunc) *rawWorld {
	srv, roots, _ := secretstest.NewUpstream(t, serve)
	v, err := secrets.New([]secrets.Secret{secret})
	require.NoError(t, err)
	sp := port(srv.URL)
	p, err := Start(Config{Rules: Rules{Allowed: []string{fmt.Sprintf("localhost:%d", sp), fmt.Sprintf("127.0.0.1:%d", sp)}},
		Secrets: v, UpstreamRoots: roots}, "")
	require.NoError(t, err)
	t.Cleanup(p.Close)
	trust := x509.NewCertPool()
	require.True(t, trust.AppendCertsFromPEM(v.CACertPEM()))
	return &rawWorld{p: p, v: v, sp: sp, trust: trust}
}

// exchange opens CONNECT host:sp through the proxy, TLS inside it with the
// session CA, writes raw, and returns everything the proxy sends back
// until it closes or 10 s of silence pass.
func (w *rawWorld) exchange(t *testing.T, host, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", w.p.Port()))
	require.NoError(t, err)
	defer c.Close()
	target := fmt.Sprintf("%s:%d", host, w.sp)
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	tc := tls.Client(&bufferedConn{Conn: c, r: br}, &tls.Config{ServerName: host, RootCAs: w.trust})
	require.NoError(t, tc.Handshake())
	_, err = io.WriteString(tc, raw)
	require.NoError(t, err)
	var out strings.Builder
	buf := make([]byte, 4096)
	for {
		tc.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := tc.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			return out.String()
		}
	}
}

// TestSecretURLErrorNeverQuotesTheValue: with inject_url, a path that
// puts the sentinel right after "%2" parses (%2c is an escape), but once
// the value is in, "%2g…" does not: the proxy's 400 says so without
// quoting the rewritten URL (it quoted the value, unmasked).
func TestSecretURLErrorNeverQuotesTheValue(t *testing.T) {
	reached := make(chan string, 4)
	w := newRawWorld(t, githubSecret(testSecret, true), func(rw http.ResponseWriter, r *http.Request) {
		reached <- r.RequestURI
	})
	sent := w.v.Sentinel("github")
	out := w.exchange(t, "localhost", fmt.Sprintf("GET /%%2%s HTTP/1.1\r\nHost: localhost:%d\r\nConnection: close\r\n\r\n", sent, w.sp))
	assert.NotContains(t, out, testSecret, "the proxy's own error handed the value back: %s", out)
}

// TestSecretHostsSwitchOfProtocolRefused: a secret's host that switches
// protocols anyway (101) is refused with a 502: after the switch the
// masking could not read the stream, where the Basic credential the proxy
// re-encoded with the value came back whole.
func TestSecretHostsSwitchOfProtocolRefused(t *testing.T) {
	w := newRawWorld(t, githubSecret(testSecret, false), func(rw http.ResponseWriter, r *http.Request) {
		conn, buf, err := rw.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		fmt.Fprintf(buf, "you sent: %s\n", r.Header.Get("Authorization"))
		buf.Flush()
	})
	cred := base64.StdEncoding.EncodeToString([]byte("x:" + w.v.Sentinel("github")))
	out := w.exchange(t, "localhost", fmt.Sprintf("GET /ws HTTP/1.1\r\nHost: localhost:%d\r\nUpgrade: echo\r\nConnection: Upgrade\r\nAuthorization: Basic %s\r\n\r\n", w.sp, cred))
	real := base64.StdEncoding.EncodeToString([]byte("x:" + testSecret))
	assert.NotContains(t, out, "101", "a secret's host's switch of protocol is refused: %s", out)
	assert.Contains(t, out, "502", out)
	assert.NotContains(t, out, real, "the re-encoded credential came back after the 101, unmasked: %s", out)
}

// TestSentinelAnywhereInTheHeadRefused: a request to another allowed host
// carrying the sentinel in a header's name, as the method, or
// percent-encoded in the URL is refused with a 403, never forwarded (it
// was forwarded, and the human never told).
func TestSentinelAnywhereInTheHeadRefused(t *testing.T) {
	var mu sync.Mutex
	var got []string
	w := newRawWorld(t, githubSecret(testSecret, false), func(rw http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		r.Header.Write(&b)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Query().Get("t")+" "+b.String())
		mu.Unlock()
	})
	sent := w.v.Sentinel("github")
	for name, raw := range map[string]string{
		"header name": fmt.Sprintf("GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-%s: 1\r\nConnection: close\r\n\r\n", w.sp, sent),
		"method":      fmt.Sprintf("%s / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", sent, w.sp),
		// The host decodes %63 to 'c': the sentinel, whole.
		"percent-encoded URL": fmt.Sprintf("GET /?t=%%63%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", sent[1:], w.sp),
	} {
		out := w.exchange(t, "127.0.0.1", raw)
		assert.Contains(t, out, "403", "%s: %s", name, out)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, g := range got {
		assert.NotContains(t, strings.ToLower(g), sent, "the sentinel reached another host")
	}
}

// TestSentinelInTheTargetNeverLookedUp: a sentinel in the name of a
// CONNECT (or SOCKS, or captured) target under an allowed wildcard is
// refused with a 403 before any lookup: it went out to the domain's name
// servers, and as SNI, never refused or logged.
func TestSentinelInTheTargetNeverLookedUp(t *testing.T) {
	v, err := secrets.New([]secrets.Secret{githubSecret(testSecret, false)})
	require.NoError(t, err)
	var mu sync.Mutex
	var looked []string
	p, err := Start(Config{Rules: Rules{Allowed: []string{"*.example.test"}}, Secrets: v,
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			mu.Lock()
			looked = append(looked, host)
			mu.Unlock()
			return nil, fmt.Errorf("no such host")
		}}, "")
	require.NoError(t, err)
	t.Cleanup(p.Close)
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.Port()))
	require.NoError(t, err)
	defer c.Close()
	target := v.Sentinel("github") + ".example.test:443"
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	for _, h := range looked {
		assert.NotContains(t, h, v.Sentinel("github"), "the sentinel went out in a DNS query (answer %d)", resp.StatusCode)
	}
	assert.Equal(t, 403, resp.StatusCode, "a sentinel in the target is refused")
}

// TestSecretHostsNeverAskedToSwitch: a request to a secret's host loses
// its `Upgrade: h2c`, so a host that speaks h2c (a Go server behind
// h2c.NewHandler) answers in HTTP/1.1, masked. With the upgrade, the
// answer to the very request the value was put in came as HPACK headers
// and framed data, which the masking could not read.
func TestSecretHostsNeverAskedToSwitch(t *testing.T) {
	echo := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("X-Echo", r.Header.Get("Authorization"))
		fmt.Fprintf(rw, "echo: %s", r.Header.Get("Authorization"))
	})
	w := newRawWorld(t, githubSecret(testSecret, false), h2c.NewHandler(echo, &http2.Server{}).ServeHTTP)
	var tail bytes.Buffer
	tail.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&tail, nil)
	fr.WriteSettings()
	for i := range 6 { // push the preface past the guard's hold-back
		fr.WritePing(false, [8]byte{byte(i)})
	}
	out := w.exchange(t, "localhost", fmt.Sprintf("GET / HTTP/1.1\r\nHost: localhost:%d\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: \r\nAuthorization: Bearer %s\r\n\r\n", w.sp, w.v.Sentinel("github"))+tail.String())
	assert.NotContains(t, out, "101 Switching Protocols", "a secret's host is never asked to switch: %s", out)
	assert.Contains(t, out, "echo: Bearer ***", "it answers in HTTP/1.1, masked: %s", out)
	assert.NotContains(t, out, testSecret)
	_, h2, _ := strings.Cut(out, "\r\n\r\n")
	rd := http2.NewFramer(io.Discard, strings.NewReader(h2))
	rd.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	var seen strings.Builder
	for {
		f, err := rd.ReadFrame()
		if err != nil {
			break
		}
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			for _, hf := range f.Fields {
				seen.WriteString(hf.Name + ": " + hf.Value + "\n")
			}
		case *http2.DataFrame:
			seen.Write(f.Data())
		}
	}
	assert.NotContains(t, seen.String(), testSecret, "the host's HTTP/2 answer, decoded, holds the value")
}

// TestSecretEchoInEscapedFormsMasked: a value with '/' or '+' (an AWS
// secret key, a base64 token) echoed the way common servers write text —
// an html/template error page ('+' as &#43;), PHP's json_encode ('/' as
// \/) — comes back masked (it came back readable).
func TestSecretEchoInEscapedFormsMasked(t *testing.T) {
	const value = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	page := template.Must(template.New("").Parse("<p>bad token {{.}}</p>\n"))
	w := newRawWorld(t, githubSecret(value, false), func(rw http.ResponseWriter, r *http.Request) {
		auth := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		page.Execute(rw, auth)
		fmt.Fprintf(rw, "{\"token\":\"%s\"}\n", strings.ReplaceAll(auth, "/", `\/`))
	})
	out := w.exchange(t, "localhost", fmt.Sprintf("GET / HTTP/1.1\r\nHost: localhost:%d\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", w.sp, w.v.Sentinel("github")))
	require.Contains(t, out, "bad token", out)
	unescaped := strings.NewReplacer("&#43;", "+", `\/`, "/").Replace(out)
	assert.NotContains(t, unescaped, value, "an escaped echo of the value came back: %s", out)
}
