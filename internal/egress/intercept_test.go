package egress

import (
	"bufio"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/cordonhq/cordon/internal/secrets/secretstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testSecret = "ghp_realSecretValue0123456789abcdef"

// secretWorld is a proxy holding one secret for localhost, and a TLS
// server (its own CA) that records what reaches it and echoes the
// Authorization header back.
type secretWorld struct {
	p      *Proxy
	v      *secrets.Vault
	srv    *httptest.Server
	bundle string

	mu   sync.Mutex
	got  []string // what reached the server: "host auth body"
	logs []string
}

func newSecretWorld(t *testing.T, injectBody bool) *secretWorld {
	w := &secretWorld{}
	var roots *x509.CertPool
	w.srv, roots, _ = secretstest.NewUpstream(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body := make([]byte, 1<<10)
		n, _ := r.Body.Read(body)
		w.mu.Lock()
		w.got = append(w.got, r.Host+" "+r.Header.Get("Authorization")+" "+string(body[:n])+" "+r.URL.RawQuery)
		w.mu.Unlock()
		fmt.Fprintf(rw, "echo: %s", r.Header.Get("Authorization"))
	}))
	v, err := secrets.New([]secrets.Secret{{Name: "github", Value: []byte(testSecret), Hosts: []string{"localhost"},
		Env: "GITHUB_TOKEN", InjectBody: injectBody, InjectURL: true}})
	require.NoError(t, err)
	w.v = v
	sp := port(w.srv.URL)
	p, err := Start(Config{
		Rules:         Rules{Allowed: []string{fmt.Sprintf("localhost:%d", sp), fmt.Sprintf("127.0.0.1:%d", sp)}},
		Secrets:       v,
		UpstreamRoots: roots,
		SecretUsed: func(host string, port int, name string, r *secrets.Refusal) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.logs = append(w.logs, fmt.Sprintf("%s:%d %s refused=%v", host, port, name, r != nil))
		},
	}, "")
	require.NoError(t, err)
	t.Cleanup(p.Close)
	w.p = p
	w.bundle = filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(w.bundle, v.TrustBundle(), 0o644))
	return w
}

func (w *secretWorld) curl(t *testing.T, args ...string) string {
	t.Helper()
	all := append([]string{"-sS", "--max-time", "20", "--cacert", w.bundle, "--proxy", fmt.Sprintf("http://127.0.0.1:%d", w.p.Port())}, args...)
	out, _ := exec.Command("curl", all...).CombinedOutput()
	return string(out)
}

func (w *secretWorld) received() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.got...)
}

func (w *secretWorld) logged() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.logs...)
}

// TestSecretInjectedOnlyForItsHost: the sentinel becomes the real value in
// a request to the secret's host (verified with the session CA, no -k),
// the echo of it comes back masked, and the same sentinel to another
// allowed host, in clear text, or in a body is refused before anything
// reaches a server.
func TestSecretInjectedOnlyForItsHost(t *testing.T) {
	w := newSecretWorld(t, false)
	sent := w.v.Sentinel("github")
	sp := port(w.srv.URL)

	out := w.curl(t, "-H", "Authorization: Bearer "+sent, fmt.Sprintf("https://localhost:%d/user", sp))
	assert.Equal(t, "echo: Bearer "+strings.Repeat("*", len(testSecret)), out, "the answer echoing the secret is masked")
	require.Len(t, w.received(), 1)
	assert.Contains(t, w.received()[0], "Bearer "+testSecret, "the server got the real secret")

	out = w.curl(t, "-u", "x-access-token:"+sent, fmt.Sprintf("https://localhost:%d/repo.git/info/refs?service=git-upload-pack", sp))
	require.Len(t, w.received(), 2, out)
	assert.Contains(t, w.received()[1], "Basic "+base64.StdEncoding.EncodeToString([]byte("x-access-token:"+testSecret)), "basic auth, as git sends it")

	out = w.curl(t, fmt.Sprintf("https://localhost:%d/q?key=%s", sp, sent))
	require.Len(t, w.received(), 3, out)
	assert.Contains(t, w.received()[2], "key="+testSecret, "in the URL")

	before := len(w.received())
	for name, args := range map[string][]string{
		"another allowed host": {"-i", "-H", "Authorization: Bearer " + sent, fmt.Sprintf("https://127.0.0.1:%d/", sp)},
		"a body, not injected": {"-i", "--data", "token=" + sent, fmt.Sprintf("https://localhost:%d/", sp)},
		"plain HTTP":           {"-i", "-H", "X-Token: " + sent, fmt.Sprintf("http://localhost:%d/", sp)},
		"a big body elsewhere": {"-i", "--data-binary", "@-", fmt.Sprintf("https://127.0.0.1:%d/", sp)},
	} {
		if name == "a big body elsewhere" {
			cmd := exec.Command("curl", append([]string{"-sS", "--max-time", "20", "--cacert", w.bundle, "--proxy", fmt.Sprintf("http://127.0.0.1:%d", w.p.Port())}, args...)...)
			cmd.Stdin = strings.NewReader(strings.Repeat("x", 2<<20) + sent)
			b, _ := cmd.CombinedOutput()
			out = string(b)
		} else {
			out = w.curl(t, args...)
		}
		assert.NotContains(t, out, testSecret, name)
		if name != "a big body elsewhere" {
			assert.Contains(t, out, "403", name)
			assert.Contains(t, out, "secret github", name)
		}
	}
	for _, r := range w.received()[before:] {
		assert.NotContains(t, r, sent, "a sentinel reached a server")
		assert.NotContains(t, r, testSecret)
	}
	// The big body streams: the server may see its start, never the sentinel.
	assert.LessOrEqual(t, len(w.received()), before+1, "only the streamed big body may have begun")
	logs := w.logged()
	assert.Contains(t, logs, fmt.Sprintf("localhost:%d github refused=false", sp))
	assert.Contains(t, logs, fmt.Sprintf("127.0.0.1:%d github refused=true", sp))
	for _, l := range logs {
		assert.NotContains(t, l, testSecret)
	}
}

// TestSecretBodyInjectedWhenConfigured: inject_body puts the value in a
// body to the secret's host.
func TestSecretBodyInjectedWhenConfigured(t *testing.T) {
	w := newSecretWorld(t, true)
	sent := w.v.Sentinel("github")
	out := w.curl(t, "--data", "token="+sent, fmt.Sprintf("https://localhost:%d/", port(w.srv.URL)))
	require.Len(t, w.received(), 1, out)
	assert.Contains(t, w.received()[0], "token="+testSecret)
}

// TestSecretUpstreamVerified: the proxy re-encrypts only to a host whose
// certificate it can verify; an impostor (a certificate the proxy's roots
// do not trust) gets no request, so never the value.
func TestSecretUpstreamVerified(t *testing.T) {
	var hits atomic.Int64
	impostor := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(impostor.Close)
	w := newSecretWorld(t, false)
	ip := port(impostor.URL)
	p, err := Start(Config{Rules: Rules{Allowed: []string{fmt.Sprintf("localhost:%d", ip)}}, Secrets: w.v, UpstreamRoots: x509.NewCertPool()}, "")
	require.NoError(t, err)
	t.Cleanup(p.Close)
	w.p = p
	out := w.curl(t, "-H", "Authorization: Bearer "+w.v.Sentinel("github"), fmt.Sprintf("https://localhost:%d/", ip))
	assert.Contains(t, out, "could not reach localhost over TLS")
	assert.Zero(t, hits.Load())
}

// TestSecretThroughSOCKS: a client on the SOCKS5 side (curl's socks5h)
// gets the same treatment as one using CONNECT.
func TestSecretThroughSOCKS(t *testing.T) {
	w := newSecretWorld(t, false)
	sent := w.v.Sentinel("github")
	sp := port(w.srv.URL)
	socks := []string{"-sS", "--max-time", "20", "--cacert", w.bundle, "--proxy", fmt.Sprintf("socks5h://127.0.0.1:%d", w.p.Port())}
	out, _ := exec.Command("curl", append(socks, "-H", "Authorization: Bearer "+sent, fmt.Sprintf("https://localhost:%d/s", sp))...).CombinedOutput()
	require.Len(t, w.received(), 1, string(out))
	assert.Contains(t, w.received()[0], "Bearer "+testSecret)
	out, _ = exec.Command("curl", append(socks, "-H", "Authorization: Bearer "+sent, fmt.Sprintf("https://127.0.0.1:%d/s", sp))...).CombinedOutput()
	assert.Contains(t, string(out), "not one of the secret's hosts")
	assert.Len(t, w.received(), 1, "the other host got nothing")
}

// TestSecretGoesToTheConnectionsHostOnly: a request on a connection to the
// secret's host that names another site (a Host header, or an
// absolute-form target) is refused before anything reaches the server:
// a front end routing by Host would hand the value to that site. Found by
// a red-team review.
func TestSecretGoesToTheConnectionsHostOnly(t *testing.T) {
	w := newSecretWorld(t, false)
	sent := w.v.Sentinel("github")
	sp := port(w.srv.URL)
	for name, args := range map[string][]string{
		"Host header":     {"-i", "-H", "Host: attacker.example", "-H", "Authorization: Bearer " + sent, fmt.Sprintf("https://localhost:%d/", sp)},
		"absolute target": {"-i", "--request-target", "https://attacker2.example/x", "-H", "Authorization: Bearer " + sent, fmt.Sprintf("https://localhost:%d/", sp)},
	} {
		out := w.curl(t, args...)
		assert.Contains(t, out, "421", name)
		assert.NotContains(t, out, testSecret, name)
	}
	assert.Empty(t, w.received(), "nothing reached the server")
	out := w.curl(t, "-H", "Host: LOCALHOST.", "-H", "Authorization: Bearer "+sent, fmt.Sprintf("https://localhost:%d/", sp))
	assert.Contains(t, out, "echo: Bearer ***", "the connection's own host, in any case, still works")
}

// TestEncodedAsReadsEveryHeader: an answer from a secret's host with
// Content-Encoding "identity" and then "gzip" is encoded, and refused as
// such, not passed on unmasked (a red-team review's find).
func TestEncodedAsReadsEveryHeader(t *testing.T) {
	for want, values := range map[string][]string{
		"":     {"identity"},
		"gzip": {"identity", "gzip"},
		"br":   {"identity, br"},
	} {
		h := http.Header{}
		for _, v := range values {
			h.Add("Content-Encoding", v)
		}
		assert.Equal(t, want, encodedAs(h), "%q", values)
	}
	assert.Equal(t, "", encodedAs(http.Header{}))
}

// TestSecretsBasicCredentialEchoIsMasked: a Basic credential the proxy
// re-encoded with the real value, echoed back by the secret's host, comes
// back masked like the value itself (a red-team review's find).
func TestSecretsBasicCredentialEchoIsMasked(t *testing.T) {
	w := newSecretWorld(t, false)
	sent := w.v.Sentinel("github")
	sp := port(w.srv.URL)
	real := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + testSecret))
	out := w.curl(t, "-u", "x-access-token:"+sent, fmt.Sprintf("https://localhost:%d/", sp))
	require.Len(t, w.received(), 1, out)
	assert.Contains(t, w.received()[0], "Basic "+real, "the server got the real credential")
	assert.NotContains(t, out, real, "the echo hands the credential back")
	assert.Equal(t, "echo: Basic "+strings.Repeat("*", len(real)), out)
}

// TestSecretMaskedInEveryPartOfTheAnswer: a secret's host that echoes the
// value in the status line's reason, a header's name or a trailer, or
// sends a line so malformed that the proxy answers 502 itself, hands
// none of it back (a red-team review's finds; the 502 once quoted it).
func TestSecretMaskedInEveryPartOfTheAnswer(t *testing.T) {
	var roots *x509.CertPool
	var srv *httptest.Server
	srv, roots, _ = secretstest.NewUpstream(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		auth := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		conn, buf, err := rw.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		switch r.URL.Path {
		case "/reason":
			fmt.Fprintf(buf, "HTTP/1.1 200 Bearer %s\r\nX-%s: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Echo\r\n\r\n2\r\nok\r\n0\r\nX-Echo: %s\r\n\r\n", auth, auth, auth)
		default:
			fmt.Fprintf(buf, "HTTP/1.1 2%s\r\n\r\n", auth)
		}
		buf.Flush()
	}))
	v, err := secrets.New([]secrets.Secret{{Name: "github", Value: []byte(testSecret), Hosts: []string{"localhost"}, Env: "GITHUB_TOKEN"}})
	require.NoError(t, err)
	sp := port(srv.URL)
	p, err := Start(Config{Rules: Rules{Allowed: []string{fmt.Sprintf("localhost:%d", sp)}}, Secrets: v, UpstreamRoots: roots}, "")
	require.NoError(t, err)
	t.Cleanup(p.Close)
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(bundle, v.TrustBundle(), 0o644))
	for _, path := range []string{"/reason", "/malformed"} {
		out, _ := exec.Command("curl", "-sS", "-i", "--raw", "--max-time", "20", "--cacert", bundle, "--proxy", fmt.Sprintf("http://127.0.0.1:%d", p.Port()),
			"-H", "Authorization: Bearer "+v.Sentinel("github"), fmt.Sprintf("https://localhost:%d%s", sp, path)).CombinedOutput()
		assert.NotContains(t, strings.ToLower(string(out)), strings.ToLower(testSecret), "%s: %s", path, out)
		if path == "/malformed" {
			// The proxy's own 502 quotes nothing of the host's answer.
			assert.Contains(t, string(out), "502 Bad Gateway", "%s: %s", path, out)
			continue
		}
		assert.Contains(t, string(out), "***", "%s: %s", path, out)
	}
}

// hijackWorld is a proxy with one secret, github, before a TLS server
// that writes its answers by hand (serve gets the request's Authorization
// value and writes the raw answer).
func hijackWorld(t *testing.T, github secrets.Secret, serve func(r *http.Request, auth string, buf *bufio.ReadWriter)) (v *secrets.Vault, curl func(args ...string) string, sp int) {
	srv, roots, _ := secretstest.NewUpstream(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		auth := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		conn, buf, err := rw.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		serve(r, auth, buf)
		buf.Flush()
	}))
	v, err := secrets.New([]secrets.Secret{github})
	require.NoError(t, err)
	sp = port(srv.URL)
	p, err := Start(Config{Rules: Rules{Allowed: []string{fmt.Sprintf("localhost:%d", sp)}}, Secrets: v, UpstreamRoots: roots}, "")
	require.NoError(t, err)
	t.Cleanup(p.Close)
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(bundle, v.TrustBundle(), 0o644))
	return v, func(args ...string) string {
		all := append([]string{"-sS", "--max-time", "20", "--cacert", bundle, "--proxy", fmt.Sprintf("http://127.0.0.1:%d", p.Port())}, args...)
		out, _ := exec.Command("curl", all...).CombinedOutput()
		return string(out)
	}, sp
}

// TestSecretInTheURLArrivesWhole: a value with bytes a URL gives a
// meaning ('+' is a space in a query, '/' splits a path, '%' starts an
// escape) reaches the host as the value itself, in a query and in a path,
// and its echo, decoded or not, comes back masked (a red-team review
// found a '+' turned into a space, which the masking missed).
func TestSecretInTheURLArrivesWhole(t *testing.T) {
	const value = "ghp_a+b/c%2Fd e=f&g0123456789"
	var got []string
	var mu sync.Mutex
	v, curl, sp := hijackWorld(t, githubSecret(value, true), func(r *http.Request, _ string, buf *bufio.ReadWriter) {
		key, path := r.URL.Query().Get("key"), strings.TrimPrefix(r.URL.Path, "/p/")
		mu.Lock()
		got = append(got, key, path)
		mu.Unlock()
		body := fmt.Sprintf("query %s\nraw %s\npath %s\nescaped %s\n", key, r.URL.RawQuery, path, r.URL.EscapedPath())
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	})
	sent := v.Sentinel("github")
	out := curl(fmt.Sprintf("https://localhost:%d/p/%s?key=%s", sp, sent, sent))
	mu.Lock()
	assert.Equal(t, []string{value, value}, got, "the host decoded the value itself, in the query and in the path: %s", out)
	mu.Unlock()
	assert.Contains(t, out, "query ***", out)
	for _, form := range []string{value, strings.ReplaceAll(value, "+", " "), url.QueryEscape(value), url.PathEscape(value), "ghp_a", "0123456789"} {
		assert.NotContains(t, out, form, "a form of the value came back")
	}
}

// TestSecretHostsInterimAnswer: a host that sends an interim answer (103
// Early Hints) before the final one keeps the relay in step — the final
// answer reaches the request it belongs to, and the next request on the
// connection gets its own — and the interim answer's headers are masked
// too.
func TestSecretHostsInterimAnswer(t *testing.T) {
	v, curl, sp := hijackWorld(t, githubSecret(testSecret, false), func(r *http.Request, auth string, buf *bufio.ReadWriter) {
		for {
			body := "answer to " + r.URL.Path
			fmt.Fprintf(buf, "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\nX-Echo: %s\r\n\r\n", auth)
			fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			buf.Flush()
			next, err := http.ReadRequest(buf.Reader)
			if err != nil {
				return
			}
			r, auth = next, strings.TrimPrefix(next.Header.Get("Authorization"), "Bearer ")
		}
	})
	auth := "Authorization: Bearer " + v.Sentinel("github")
	base := fmt.Sprintf("https://localhost:%d", sp)
	out := curl("-i", "-H", auth, base+"/one", "-H", auth, base+"/two")
	assert.Contains(t, out, "answer to /one", out)
	assert.Contains(t, out, "answer to /two", out)
	assert.Less(t, strings.Index(out, "answer to /one"), strings.Index(out, "answer to /two"), out)
	assert.Contains(t, out, "X-Echo: "+strings.Repeat("*", len(testSecret)), "the interim answer passed on, masked")
	assert.NotContains(t, out, testSecret)
}

// TestSecretInTheURLOnlyWhenConfigured: without inject_url a sentinel in
// the URL to the secret's own host is refused, and nothing reaches it: a
// path or a query is data the host may keep (a file name, a search) and
// serve back to the sandbox.
func TestSecretInTheURLOnlyWhenConfigured(t *testing.T) {
	var reached atomic.Int32
	v, curl, sp := hijackWorld(t, githubSecret(testSecret, false), func(*http.Request, string, *bufio.ReadWriter) { reached.Add(1) })
	out := curl("-i", fmt.Sprintf("https://localhost:%d/repos/o/r/contents/%s", sp, v.Sentinel("github")))
	assert.Contains(t, out, "403", out)
	assert.Contains(t, out, "inject_url", out)
	assert.Zero(t, reached.Load(), "the request reached the host")
}

// githubSecret is the test's secret for localhost.
func githubSecret(value string, injectURL bool) secrets.Secret {
	return secrets.Secret{Name: "github", Value: []byte(value), Hosts: []string{"localhost"}, Env: "GITHUB_TOKEN", InjectURL: injectURL}
}
