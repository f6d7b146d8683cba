//go:build linux

package mcpserver_test

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cordonhq/cordon/internal/secrets/secretstest"
	"github.com/stretchr/testify/require"
)

// useOtherProxy is a command of a session with no secrets (network
// allow, Landlock): it reads another session's sentinel from the masked
// copy in that session's egress directory in the host's /tmp, and sends it
// through that session's proxy (its unix socket there) to the secret's
// host, trusting nothing (the proxy's CA is not its own).
const useOtherProxy = `
import glob, re, socket, ssl, sys
port = sys.argv[1]
for d in glob.glob("/tmp/cordon-egress-*"):
    try:
        text = open(d + "/masked-0").read()
    except OSError:
        continue
    m = re.search(r"cordon-sentinel-[0-9a-f]+", text)
    if not m or "rt39c-cross" not in text:  # the holder's own, no other session's
        continue
    try:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(20)
        s.connect(d + "/s")
    except OSError as e:
        print("no socket in", d, e)
        continue
    s.sendall(("CONNECT localhost:%s HTTP/1.1\r\nHost: localhost:%s\r\n\r\n" % (port, port)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    print("connect:", head.split(b"\r\n")[0].decode())
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    t = ctx.wrap_socket(s, server_hostname="localhost")
    t.sendall(("GET /from-other-session HTTP/1.1\r\nHost: localhost:%s\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n" % (port, m.group(0))).encode())
    print("answer:", t.recv(200).decode(errors="replace").split("\r\n")[0])
`

// TestSecretsUsedThroughAnotherSessionsProxy: the human's secrets are for
// network-restricted commands only ("under allow and deny commands see
// neither the value nor a sentinel"). A command of a network-allow
// session under Landlock looks for the egress directory of a restricted
// bwrap session of the same user that is running a call (here a
// background one), for its masked copy (the sentinel) and its proxy
// socket, to have the real value put in on behalf of a session never
// given the secret. A red-team review found them in /tmp; they now lie in
// the state directory, and the socket serves bwrap's bridge alone
// (internal/egress TestProxyServesItsOwnCommandOnly).
func TestSecretsUsedThroughAnotherSessionsProxy(t *testing.T) {
	const value = "gh-token-canary" // the harness puts it in cordon's environment
	var mu sync.Mutex
	var got []string
	srv, _, caPEM := secretstest.NewUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		fmt.Fprint(w, "welcome")
	}))
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	caFile := filepath.Join(t.TempDir(), "upstream-ca.pem")
	require.NoError(t, os.WriteFile(caFile, caPEM, 0o644))
	t.Setenv("SSL_CERT_FILE", caFile)

	// The session with the secret: restricted, bwrap, a secret file.
	holder := newWorld(t)
	holder.writeUserConfig(t, fmt.Sprintf(`
network = "restricted"
allowed_domains = ["localhost:%s"]

[secrets.github]
from_env = "GITHUB_TOKEN"
env = "GITHUB_TOKEN"
hosts = ["localhost"]
files = ["~/creds/token"]
`, port))
	tokenFile := filepath.Join(holder.home, "creds", "token")
	require.NoError(t, os.MkdirAll(filepath.Dir(tokenFile), 0o755))
	require.NoError(t, os.WriteFile(tokenFile, []byte("rt39c-cross token="+value+"\n"), 0o600))
	hs := holder.stdio(t, clientOpts{version: "2025-11-25"}, "--backend", "bwrap", "--approval", "never")
	bg := call(t, hs, "bash", map[string]any{"command": "sleep 120", "background": true, "yield_ms": 500})
	require.False(t, bg.IsError, text(bg))

	// Another session, network allow (the default), no proxy, no sentinel.
	other := newWorld(t)
	require.NoError(t, os.WriteFile(filepath.Join(other.ws, "use.py"), []byte(useOtherProxy), 0o644))
	os_ := other.stdio(t, clientOpts{version: "2025-11-25"}, "--backend", "landlock", "--approval", "never", "--network", "allow")
	out := text(call(t, os_, "bash", map[string]any{"command": "python3 use.py " + port}))
	t.Log(out)
	mu.Lock()
	defer mu.Unlock()
	for _, g := range got {
		require.False(t, strings.HasPrefix(g, "/from-other-session") && strings.Contains(g, value),
			"a session never given the secret had the value injected by another session's proxy: %v\n%s", got, out)
	}
}
