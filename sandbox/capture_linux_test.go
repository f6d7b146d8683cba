package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRestrictedCapturesProgramsThatIgnoreTheProxy: under bwrap, curl
// told to ignore the proxy, a Go program with its own transport, Python's
// urllib with no proxy handler and Node's built-in fetch (which never reads the proxy variables) resolve a
// name through the bridge's stub DNS and reach the egress proxy, which
// decides by that name: an unlisted host gets the proxy's 403, an allowed
// one is let through (and, with no internet here, fails upstream: 502).
func TestRestrictedCapturesProgramsThatIgnoreTheProxy(t *testing.T) {
	prov := newBwrap()
	if res := probeBackend(prov, t.TempDir()); !res.OK {
		t.Fatalf("bwrap must work on this machine: %s", res.Reason)
	}
	f := newFixture(t, prov)
	// A Go program with a transport of its own, no proxy: Go's own
	// resolver, which reads resolv.conf (use-vc included).
	buildGoProgram(t, filepath.Join(f.ws, "gofetch"), `package main

import (
	"fmt"
	"net/http"
)

func main() {
	c := &http.Client{Transport: &http.Transport{Proxy: nil}}
	r, err := c.Get("http://go.example.test/")
	if err != nil {
		fmt.Println("error", err, "[go]")
		return
	}
	fmt.Println(r.StatusCode, "[go]")
}
`)
	_, nodeErr := exec.LookPath("node")
	_, pyErr := exec.LookPath("python3")
	script := `
getent hosts unlisted.example.test
curl -sS -m 20 --noproxy '*' -w ' %{http_code}' http://unlisted.example.test/; echo " [curl $?]"
curl -sS -m 20 --noproxy '*' -o /dev/null -w '%{http_code}' http://allowed.example.test/; echo " [allowed $?]"
curl -sS -m 20 --noproxy '*' https://unlisted.example.test/; echo " [https $?]"
if command -v python3 >/dev/null; then
python3 -c '
import urllib.request, urllib.error
o = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    o.open("http://py.example.test/", timeout=20)
except urllib.error.HTTPError as e:
    print(e.code, "[py]")
'
fi
if command -v node >/dev/null; then
node -e 'fetch("http://node.example.test/").then(r => console.log(r.status, "[node]")).catch(e => console.log("error", String(e.cause), "[node]"))'
fi
./gofetch
grep CapEff /proc/self/status
`
	out, res, decided := f.restricted([]string{"allowed.example.test"}, nil, script)
	assert.Contains(t, out, "127.64.", "the stub answers with a fake loopback address: %s", out)
	assert.Contains(t, out, "unlisted.example.test:80 is not in allowed_domains", out)
	assert.Contains(t, out, " 403 [curl 0]", out)
	assert.Contains(t, out, "502 [allowed 0]", out)
	assert.NotContains(t, out, "[https 0]", "a refused TLS connection is closed")
	assert.Contains(t, out, "CapEff:\t0000000000000000", "the command keeps no capability")
	assert.Contains(t, decided, "unlisted.example.test:80=deny")
	assert.Contains(t, decided, "unlisted.example.test:443=deny")
	assert.Contains(t, decided, "allowed.example.test:80=allow")
	assert.Contains(t, res.BlockedHosts, "unlisted.example.test:80")
	assert.Contains(t, out, "403 [go]", out)
	assert.Contains(t, decided, "go.example.test:80=deny")
	if pyErr == nil {
		assert.Contains(t, out, "403 [py]", out)
		assert.Contains(t, decided, "py.example.test:80=deny")
	}
	if nodeErr == nil {
		assert.Contains(t, out, "403 [node]", out)
		assert.Contains(t, decided, "node.example.test:80=deny")
	}
}

// buildGoProgram builds source, a main package, into dst, static (the
// sandbox has no C library of the host's to promise).
func buildGoProgram(t *testing.T, dst, source string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "main.go")
	require.NoError(t, os.WriteFile(src, []byte(source), 0o644))
	build := exec.Command("go", "build", "-o", dst, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", filepath.Base(dst), err, out)
	}
}
