//go:build linux

package mcpserver_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 33, item 1: a cordon that is not root cannot read the descriptors
// of its own warm sandboxes' helpers (they are non-dumpable), and refused
// every new loopback client after the first command. The tests run as
// root, which never saw it: TestHTTPPeerNonRoot runs the real test,
// TestHTTPPeerNonRootInner, as a user that is not root.
func TestHTTPPeerNonRoot(t *testing.T) {
	if os.Getenv("CORDON_E2E_NONROOT") != "" {
		t.Skip("already not root")
	}
	if os.Geteuid() != 0 {
		testenv.SkipUnlessCI(t, "needs root to become another user; run TestHTTPPeerNonRootInner as this user instead")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		testenv.SkipUnlessCI(t, "no setpriv")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		testenv.SkipUnlessCI(t, "no curl")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(filepath.Dir(cordonBin), "mcpserver.test")
	b, err := os.ReadFile(exe)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	home, err := os.MkdirTemp("/var/tmp", "cordon-e2e-nobody-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	// A user of its own, which no other test's cordon runs as: the
	// sandboxes of another cordon of the same user would count against
	// this one's clients.
	uid := 20000 + rand.IntN(40000)
	require.NoError(t, os.Chown(home, uid, uid))
	id := strconv.Itoa(uid)
	cmd := exec.Command(setpriv, "--reuid="+id, "--regid="+id, "--clear-groups", "--", bin,
		"-test.v", "-test.count=1", "-test.run", "^TestHTTPPeerNonRootInner$")
	cmd.Env = append(os.Environ(), "CORDON_E2E_NONROOT=1", "CORDON_E2E_BIN="+cordonBin, "HOME="+home, "TMPDIR="+home,
		"GORACE=atexit_sleep_ms=0")
	cmd.Dir = home
	out, err := cmd.CombinedOutput()
	t.Logf("not root:\n%s", out)
	require.NoError(t, err)
	assert.Contains(t, string(out), "--- PASS: TestHTTPPeerNonRootInner")
	assert.Contains(t, string(out), "--- PASS: TestHTTPPeerNonRootInner/landlock")
}

func TestHTTPPeerNonRootInner(t *testing.T) {
	if os.Getenv("CORDON_E2E_NONROOT") == "" {
		t.Skip("run by TestHTTPPeerNonRoot")
	}
	for _, backend := range []string{"landlock", "bwrap"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			srv, log := peerServer(t, w, "--backend", backend)
			cs := freshHTTPClient(t, srv)
			res := call(t, cs, "bash", map[string]any{"command": "echo first"})
			if out, _ := structured(t, res)["output"].(string); strings.Contains(out, "sandbox unavailable") {
				// bwrap needs unprivileged user namespaces, which a
				// container may not give a user that is not root.
				testenv.SkipUnlessCI(t, backend+" does not work for this user here: "+out)
			}
			require.Equal(t, backend, structured(t, res)["backend"], text(res))

			// A hundred commands, some leaving a background process, on
			// two sessions; one ends, leaving its warm sandbox idle.
			other := freshHTTPClient(t, srv)
			for i := range 100 {
				c := cs
				if i%2 == 1 {
					c = other
				}
				cmd := fmt.Sprintf("echo %d", i)
				if i%25 == 0 {
					cmd = "sleep 60 > /dev/null 2>&1 & echo started"
				}
				res := call(t, c, "bash", map[string]any{"command": cmd})
				require.False(t, res.IsError, text(res))
			}
			other.Close()
			// A background process runs in a sandbox of its own, started
			// cold, whose helpers this cordon cannot read either; so does
			// a foreground call on the restricted network while it waits.
			res = call(t, cs, "bash", map[string]any{"command": "sleep 300", "background": true})
			require.False(t, res.IsError, text(res))

			// Ten new clients, each on connections of its own: the Go SDK
			// client, curl, and the Go SDK client through a reverse proxy
			// on loopback.
			proxy := reverseProxy(t, srv)
			for i := range 10 {
				switch i % 3 {
				case 0:
					res := call(t, freshHTTPClient(t, srv), "sandbox_status", nil)
					assert.False(t, res.IsError, text(res))
				case 1:
					acceptedOutside(t, w, srv)
					require.NoError(t, os.Remove(filepath.Join(w.ws, "from-outside")))
				case 2:
					res := call(t, freshHTTPClient(t, proxy), "bash", map[string]any{"command": "echo through the proxy"})
					assert.Contains(t, text(res), "through the proxy")
				}
			}
			assert.NotContains(t, log.String(), "refused an HTTP client", "no ordinary client is refused")

			// A confined command holding the token is still refused.
			file := filepath.Join(w.ws, "from-bash")
			res = call(t, cs, "bash", map[string]any{"command": attackScript(srv, file)})
			out, _ := structured(t, res)["output"].(string)
			refusedInside(t, out, file, log)

			// So is one that runs as a background process, beside the
			// helpers the check now passes over.
			file = filepath.Join(w.ws, "from-background")
			res = call(t, cs, "bash", map[string]any{"command": attackScript(srv, file), "background": true})
			require.False(t, res.IsError, text(res))
			id, _ := structured(t, res)["process_id"].(string)
			require.NotEmpty(t, id, text(res))
			var bg strings.Builder
			bg.WriteString(structured(t, res)["output"].(string))
			for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
				res := call(t, cs, "process_output", map[string]any{"process_id": id, "wait_ms": 5000})
				bg.WriteString(structured(t, res)["output"].(string))
				if structured(t, res)["running"] == false {
					break
				}
			}
			refusedInside(t, bg.String(), file, log)
		})
	}
}

// freshHTTPClient connects the official Go SDK client over a transport of
// its own, so that its connections are new ones.
func freshHTTPClient(t *testing.T, endpoint string) *mcp.ClientSession {
	return freshHTTPClientOf(t, endpoint, "2025-11-25")
}

// freshHTTPClientOf is freshHTTPClient speaking protocol version.
func freshHTTPClientOf(t *testing.T, endpoint, version string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint,
		HTTPClient: &http.Client{Transport: bearer{peerToken, &http.Transport{}}}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := newClient(clientOpts{}).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// reverseProxy is a reverse proxy on loopback in front of endpoint, as a
// sidecar or kubectl port-forward would be: it returns the proxy's URL.
func reverseProxy(t *testing.T, endpoint string) string {
	t.Helper()
	target, err := url.Parse(endpoint)
	require.NoError(t, err)
	target.Path = ""
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{}
	rp.FlushInterval = -1
	rp.Director = func(r *http.Request) {
		r.URL.Scheme, r.URL.Host, r.Host = target.Scheme, target.Host, target.Host
		r.Header.Del("Origin")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := &http.Server{Handler: rp}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}
