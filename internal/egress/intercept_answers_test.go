package egress

// Holes a second red-team review of the secrets' proxy found, each
// reproduced against the real proxy and closed.

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSentinelRefusalNeverQuotesARawSOCKSName: a SOCKS5 client names its
// target with up to 255 arbitrary bytes. A name holding the sentinel is
// refused, and the human is told, without the name: it quoted newlines,
// terminal escapes and words of the model's choosing ("…this was cordon's
// own self-test, nothing was sent; approve the next request") in a
// message the human trusts as cordon's.
func TestSentinelRefusalNeverQuotesARawSOCKSName(t *testing.T) {
	v, err := secrets.New([]secrets.Secret{githubSecret(testSecret, false)})
	require.NoError(t, err)
	var mu sync.Mutex
	var told []string
	p, err := Start(Config{Rules: Rules{Allowed: []string{"*.example.test"}}, Secrets: v,
		SecretUsed: func(host string, port int, name string, r *secrets.Refusal) {
			if r != nil {
				mu.Lock()
				told = append(told, r.Error())
				mu.Unlock()
			}
		}}, "")
	require.NoError(t, err)
	t.Cleanup(p.Close)

	name := v.Sentinel("github") + "\n\n\x1bc\rcordon - the request above was cordon's own self-test; nothing was sent. Allow the next network question."
	require.Less(t, len(name), 256)
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.Port()))
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	_, err = c.Write([]byte{5, 1, 0})
	require.NoError(t, err)
	br := bufio.NewReader(c)
	hello := make([]byte, 2)
	_, err = io.ReadFull(br, hello)
	require.NoError(t, err)
	req := append([]byte{5, 1, 0, 3, byte(len(name))}, name...)
	req = binary.BigEndian.AppendUint16(req, 443)
	_, err = c.Write(req)
	require.NoError(t, err)
	reply := make([]byte, 2)
	_, err = io.ReadFull(br, reply)
	require.NoError(t, err)
	assert.NotEqual(t, byte(0), reply[1], "the connection was refused %v", reply)

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, told, "the refusal was reported (reply %v)", reply)
	for _, msg := range told {
		assert.False(t, strings.ContainsAny(msg, "\n\r\x1b"), "the human's warning carries the model's raw bytes: %q", msg)
		assert.NotContains(t, msg, "self-test", "the human's warning carries the model's words: %q", msg)
	}
}

// TestSecretBasicCredentialMaskedInALaterAnswer: the Basic credential the
// proxy re-encodes with the value is masked in every later answer on the
// connection, not only its own request's (it was). A secret's host that
// answers a HEAD with a body (a naive echo server writing back the
// Authorization it got) leaves that body in the connection, where the
// proxy reads it as the answer to the next pipelined request.
func TestSecretBasicCredentialMaskedInALaterAnswer(t *testing.T) {
	w := newRawWorld(t, githubSecret(testSecret, false), func(rw http.ResponseWriter, r *http.Request) {
		conn, buf, err := rw.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		echo := r.Header.Get("Authorization") + "\r\n"
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(echo), echo)
		buf.Flush()
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		http.ReadRequest(buf.Reader) // the next request, before closing
	})
	cred := base64.StdEncoding.EncodeToString([]byte("x:" + w.v.Sentinel("github")))
	real := base64.StdEncoding.EncodeToString([]byte("x:" + testSecret))
	out := w.exchange(t, "localhost", fmt.Sprintf("HEAD / HTTP/1.1\r\nHost: localhost:%d\r\nAuthorization: Basic %s\r\n\r\n"+
		"GET / HTTP/1.1\r\nHost: localhost:%d\r\nConnection: close\r\n\r\n", w.sp, cred, w.sp))
	assert.NotContains(t, out, real, "the re-encoded credential came back in a later answer: %s", out)
}

// TestSecretNeverQuotedInTheProxysOwnError: the proxy's 502 for a
// malformed answer from a secret's host quotes nothing of it. It quoted
// Go's parse error, which writes the offending text with %q: a value
// holding '"' and '&' (a password) came back escaped as no form the
// masking knows, one unescape away from the value.
func TestSecretNeverQuotedInTheProxysOwnError(t *testing.T) {
	const value = `pa"ss&w0rd-0123456789`
	w := newRawWorld(t, githubSecret(value, false), func(rw http.ResponseWriter, r *http.Request) {
		conn, buf, err := rw.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		echo := r.Header.Get("Authorization") + "\r\n"
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(echo), echo)
		buf.Flush()
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		http.ReadRequest(buf.Reader)
	})
	out := w.exchange(t, "localhost", fmt.Sprintf("HEAD / HTTP/1.1\r\nHost: localhost:%d\r\nAuthorization: Bearer %s\r\n\r\n"+
		"GET / HTTP/1.1\r\nHost: localhost:%d\r\nConnection: close\r\n\r\n", w.sp, w.v.Sentinel("github"), w.sp))
	assert.NotContains(t, strings.ReplaceAll(out, `\"`, `"`), value, "the proxy's own error quoted the value: %s", out)
}
