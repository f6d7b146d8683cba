package sandbox

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cordonhq/cordon/internal/egress"
	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLandlockCommandNeverUsesAnotherCallsProxySocket: a bwrap call's
// proxy socket lies in <state-dir>/egress/, its name listable (and in
// /proc/net/unix), and serves only a peer in a pid namespace below
// cordon's. A Landlock command of another session under network allow
// (the default network) may make unix sockets and, seccomp permitting,
// unshare a user and pid namespace of its own: from there it must still
// not be served (it would have the other session's secrets put in).
func TestLandlockCommandNeverUsesAnotherCallsProxySocket(t *testing.T) {
	for _, tool := range []string{"unshare", "socat"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.SkipUnlessCI(t, tool+" is not installed")
		}
	}
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "reached")
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)

	f := newFixture(t, newLandlock())
	// The other call's proxy, where egressDir puts it.
	dir := filepath.Join(f.state, "egress", "othercall")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	sock := filepath.Join(dir, "s")
	p, err := egress.Start(egress.Config{Rules: egress.Rules{Allowed: []string{u.Host}}, Token: "tok-123"}, sock)
	require.NoError(t, err)
	t.Cleanup(p.Close)

	pol := f.policy(WorkspaceWrite, NetworkAllow)
	out, _ := f.run(pol, "sh", "-c",
		`ls "$1"; printf 'GET %s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$2" "$3" | (cd "$1/othercall" && unshare -Up --fork sh -c 'echo unshared; exec socat -d -d -t 20 - UNIX-CONNECT:s' 2>&1)`,
		"sh", filepath.Join(f.state, "egress"), srv.URL, u.Host)
	// The attack's every step ran: its own pid namespace, the connection.
	require.Contains(t, out, "unshared", out)
	require.Contains(t, out, "successfully connected", out)
	assert.NotContains(t, out, "reached", out)
	assert.Zero(t, hits.Load(), "a Landlock command in a pid namespace of its own making used another call's proxy socket: %s", out)
}
