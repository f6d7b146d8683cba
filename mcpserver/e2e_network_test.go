//go:build linux

package mcpserver_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outsideServer is a host the allow list does not name, on loopback
// (these machines have no internet), counting what reaches it.
func outsideServer(t *testing.T) (hostPort string, hits *atomic.Int64) {
	hits = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "hello from the outside")
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return "localhost:" + port, hits
}

func curlTwice(hostPort string) map[string]any {
	return map[string]any{"command": fmt.Sprintf("curl -sS -m 10 http://%[1]s/; echo; curl -sS -m 10 http://%[1]s/", hostPort)}
}

// TestRestrictedNetworkAsksTheHuman: an unlisted host waits while the human
// is asked; allow_once holds for the rest of the call only.
func TestRestrictedNetworkAllowOnce(t *testing.T) {
	host, hits := outsideServer(t)
	w := newWorld(t)
	h := &human{action: "accept", decision: "allow_once"}
	cs := w.stdio(t, clientOpts{version: "2025-11-25", elicit: h.handle}, "--network", "restricted")
	res := call(t, cs, "bash", curlTwice(host))
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "hello from the outside\nhello from the outside", text(res))
	assert.EqualValues(t, 1, h.asked.Load(), "asked once for the call")
	assert.EqualValues(t, 2, hits.Load())
	msg := h.lastMsg.Load().(string)
	assert.Contains(t, msg, "wants to connect to "+host)
	assert.Contains(t, msg, "curl -sS", "the human sees the command")
	assert.NotContains(t, structured(t, res), "blocked_hosts")

	call(t, cs, "bash", curlTwice(host))
	assert.EqualValues(t, 2, h.asked.Load(), "allow_once does not outlive its call")
}

// TestRestrictedNetworkAllowSession: allow_session adds the host to the
// session's allowed domains, logged, and sandbox_status lists it.
func TestRestrictedNetworkAllowSession(t *testing.T) {
	host, _ := outsideServer(t)
	w := newWorld(t)
	h := &human{action: "accept", decision: "allow_session"}
	cs := w.stdio(t, clientOpts{version: "2025-11-25", elicit: h.handle}, "--network", "restricted")
	for range 2 {
		res := call(t, cs, "bash", curlTwice(host))
		require.False(t, res.IsError, text(res))
		assert.Contains(t, text(res), "hello from the outside")
	}
	assert.EqualValues(t, 1, h.asked.Load(), "later calls are not asked again")
	st := structured(t, call(t, cs, "sandbox_status", nil))
	assert.Equal(t, "restricted", st["network"])
	assert.Contains(t, st["allowed_domains"], host)
	assert.Contains(t, st["network_enforcer"], "egress proxy")
	sessions := listSessions(t, w)
	require.Len(t, sessions, 1)
	logText := cordonCLI(t, w, "log", "--json", sessions[0])
	assert.Contains(t, logText, `"type":"network/decision"`)
	assert.Contains(t, logText, `"decision":"asked-allow"`)
	assert.Contains(t, logText, `"host":"`+host+`"`)
}

// TestRestrictedNetworkRefused: a human who says no, a client that cannot
// be asked, and a client that answers only between calls: the host is
// refused, never contacted, and the result names it for the model.
func TestRestrictedNetworkRefused(t *testing.T) {
	host, hits := outsideServer(t)
	cases := []struct {
		name, version string
		human         *human
		want          string
		asked         int32
	}{
		{"deny", "2025-11-25", &human{action: "accept", decision: "deny"}, "the human did not allow " + host, 1},
		{"decline", "2025-11-25", &human{action: "decline"}, "the human did not allow " + host, 1},
		{"no elicitation", "2025-11-25", nil, "is not in allowed_domains", 0},
		{"modern era", "2026-07-28", &human{action: "accept", decision: "allow_once"}, "the human did not allow " + host, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			o := clientOpts{version: c.version}
			if c.human != nil {
				o.elicit = c.human.handle
			}
			cs := w.stdio(t, o, "--network", "restricted")
			before := hits.Load()
			res := call(t, cs, "bash", map[string]any{"command": fmt.Sprintf("curl -sS -m 10 http://%s/", host)})
			out := text(res)
			assert.Contains(t, out, c.want)
			assert.Contains(t, out, "egress proxy refused "+host, "the model is told which host")
			assert.Equal(t, before, hits.Load(), "the host was never contacted")
			st := structured(t, res)
			assert.Equal(t, []any{host}, st["blocked_hosts"])
			if c.human != nil {
				assert.Equal(t, c.asked, c.human.asked.Load())
			}
		})
	}
}
