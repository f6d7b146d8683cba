//go:build linux

package mcpserver_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rawHTTP talks to `cordon serve --http` request by request, for what a
// well-behaved client would never send.
type rawHTTP struct {
	url, token, session string
}

type rawReply struct {
	status int
	header http.Header
	body   string
}

func newRawHTTP(t *testing.T, w *world, extra ...string) *rawHTTP {
	url, token, _ := w.httpServer(t, extra...)
	return &rawHTTP{url: url, token: token}
}

// do sends one request; headers override the defaults (a "" value
// removes one).
func (c *rawHTTP) do(t *testing.T, method, body string, headers map[string]string) rawReply {
	t.Helper()
	r, err := c.try(method, body, headers)
	require.NoError(t, err)
	return r
}

// try is do for another goroutine than the test's.
func (c *rawHTTP) try(method, body string, headers map[string]string) (rawReply, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.url, rd)
	if err != nil {
		return rawReply{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
		} else if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	cl := &http.Client{Timeout: 30 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		return rawReply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return rawReply{status: resp.StatusCode, header: resp.Header, body: string(b)}, err
}

func (c *rawHTTP) post(t *testing.T, body string) rawReply {
	t.Helper()
	return c.do(t, http.MethodPost, body, nil)
}

// initialize opens a protocol session (2025-11-25) and completes the
// handshake; later requests carry its id.
func (c *rawHTTP) initialize(t *testing.T) {
	t.Helper()
	r := c.do(t, http.MethodPost, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	require.Equal(t, http.StatusOK, r.status, r.body)
	c.session = r.header.Get("Mcp-Session-Id")
	require.NotEmpty(t, c.session, "initialize answered without Mcp-Session-Id")
	r = c.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, r.status, r.body)
}
