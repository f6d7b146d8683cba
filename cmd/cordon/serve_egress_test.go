package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/egress"
	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEgressNeverReachesTheHTTPPort: whatever --http names (a wildcard, a
// loopback address, a name, the host's own address), a confined command
// that allowed_domains lets name any local address — another loopback
// address, the interface's, 0.0.0.0 — still cannot reach cordon's HTTP
// port through the egress proxy.
func TestEgressNeverReachesTheHTTPPort(t *testing.T) {
	own := testenv.InterfaceAddr(t)
	ln, err := net.Listen("tcp", ":0") // stands in for cordon's HTTP endpoint, on every address
	require.NoError(t, err)
	defer ln.Close()
	var reached atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	var allowed []string
	targets := []string{"127.0.0.1", "127.0.0.2", own.String(), "0.0.0.0", "::1"}
	for _, h := range targets {
		allowed = append(allowed, net.JoinHostPort(h, port))
	}
	for _, served := range []string{"0.0.0.0", "::", "127.0.0.1", "localhost", own.String()} {
		t.Run(served, func(t *testing.T) {
			p, err := egress.Start(egress.Config{Rules: egress.Rules{Allowed: allowed},
				Forbidden: servedAddrs(net.JoinHostPort(served, port))}, "")
			require.NoError(t, err)
			defer p.Close()
			for _, h := range targets {
				target := net.JoinHostPort(h, port)
				c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.Port()))
				require.NoError(t, err)
				c.SetDeadline(time.Now().Add(5 * time.Second))
				fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
				resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
				require.NoError(t, err)
				body, _ := io.ReadAll(resp.Body)
				c.Close()
				assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s: %s", target, body)
			}
		})
	}
	assert.Zero(t, reached.Load(), "the HTTP port was reached")
}
