package sandbox

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/egress"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingServer is a loopback HTTP (or HTTPS) server that counts its
// requests: a refused route is proved by a count that did not move.
type countingServer struct {
	*httptest.Server
	hits atomic.Int64
}

func newCountingServer(t *testing.T, tls bool, h http.Handler) *countingServer {
	s := &countingServer{}
	if h == nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from the outside") })
	}
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.hits.Add(1); h.ServeHTTP(w, r) })
	if tls {
		s.Server = httptest.NewTLSServer(counted)
	} else {
		s.Server = httptest.NewServer(counted)
	}
	t.Cleanup(s.Close)
	return s
}

func (s *countingServer) port() string {
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	return p
}

// restricted runs a script under network restricted through the executor
// (which starts the call's egress proxy), with the lists given.
func (f *fixture) restricted(allowed, denied []string, script string) (string, RunResult, []string) {
	f.t.Helper()
	p := f.policy(WorkspaceWrite, NetworkRestricted)
	p.AllowedDomains, p.DeniedDomains = allowed, denied
	var mu sync.Mutex
	var decided []string
	var out bytes.Buffer
	ex := &Executor{Backends: &Backends{Forced: f.prov.Name()}, Requirement: Required}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := ex.Run(ctx, p, RunSpec{
		Argv: []string{"bash", "-c", script}, Dir: p.WorkspaceRoot,
		Env:    append(envWithout("HOME"), "HOME="+f.home),
		Stdout: &out, Stderr: &out, OwnGroup: true,
		Egress: EgressHooks{Decided: func(host string, port int, d egress.Decision) {
			mu.Lock()
			defer mu.Unlock()
			decided = append(decided, fmt.Sprintf("%s:%d=%s", host, port, d))
		}},
	})
	require.NoError(f.t, err, out.String())
	mu.Lock()
	defer mu.Unlock()
	return out.String(), res, decided
}

// TestRestrictedNetworkThroughTheProxy: curl over HTTP and HTTPS (CONNECT
// to a self-signed server) reaches an allowed host; an unlisted one is
// refused with a 403 naming it and the config line, and never contacted;
// deny wins over allow.
func TestRestrictedNetworkThroughTheProxy(t *testing.T) {
	plain := newCountingServer(t, false, nil)
	tls := newCountingServer(t, true, nil)
	other := newCountingServer(t, false, nil)
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		before := other.hits.Load()
		allowed := []string{"localhost:" + plain.port(), "localhost:" + tls.port(), "localhost:" + other.port()}
		script := fmt.Sprintf(`
curl -sS -m 10 http://localhost:%s/; echo " [plain $?]"
curl -sS -m 10 -k https://localhost:%s/; echo " [tls $?]"
curl -sS -m 10 http://127.0.0.1:%s/; echo " [unlisted $?]"
curl -sS -m 10 http://localhost:%s/; echo " [denied $?]"
`, plain.port(), tls.port(), other.port(), other.port())
		out, res, decided := f.restricted(allowed[:2], []string{"localhost:" + other.port()}, script)
		assert.Contains(t, out, "hello from the outside [plain 0]", out)
		assert.Contains(t, out, "hello from the outside [tls 0]", out)
		assert.Contains(t, out, fmt.Sprintf("127.0.0.1:%s is not in allowed_domains", other.port()), out)
		assert.Contains(t, out, fmt.Sprintf(`allowed_domains = ["127.0.0.1"]`), "the 403 names the config line")
		assert.Contains(t, out, "deny wins", out)
		assert.Equal(t, before, other.hits.Load(), "the unlisted and the denied server were never contacted")
		assert.ElementsMatch(t, []string{"127.0.0.1:" + other.port(), "localhost:" + other.port()}, res.BlockedHosts)
		assert.Contains(t, decided, "localhost:"+plain.port()+"=allow")
		assert.Contains(t, decided, "127.0.0.1:"+other.port()+"=deny")
		_ = allowed
	})
}

// TestRestrictedNetworkNoOtherRoute: whatever ignores the proxy gets
// nowhere — curl --noproxy, bash's /dev/tcp, a Python socket, UDP, IPv6 —
// and the listeners see nothing.
func TestRestrictedNetworkNoOtherRoute(t *testing.T) {
	srv := newCountingServer(t, false, nil)
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer udp.Close()
	var udpGot atomic.Int64
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			udpGot.Add(1)
		}
	}()
	_, udpPort, _ := net.SplitHostPort(udp.LocalAddr().String())
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		before := srv.hits.Load()
		script := fmt.Sprintf(`
curl -sS -m 5 --noproxy '*' http://127.0.0.1:%[1]s/ && echo "ROUTE noproxy"
(exec 3<>/dev/tcp/127.0.0.1/%[1]s && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && cat <&3) 2>/dev/null | grep -q hello && echo "ROUTE devtcp"
python3 - <<'EOF'
import socket
for name, fam, kind, addr in [("tcp", socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", %[1]s)),
                              ("udp", socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", %[2]s)),
                              ("tcp6", socket.AF_INET6, socket.SOCK_STREAM, ("::1", %[1]s))]:
    try:
        s = socket.socket(fam, kind)
        s.settimeout(3)
        if kind == socket.SOCK_DGRAM:
            s.sendto(b"leak", addr)
            print("ROUTE", name)
        else:
            s.connect(addr)
            s.sendall(b"GET / HTTP/1.0\r\n\r\n")
            if b"hello" in s.recv(4096):
                print("ROUTE", name)
    except OSError as e:
        print("refused", name, e.errno)
EOF
echo done`, srv.port(), udpPort)
		out, _, _ := f.restricted(nil, nil, script)
		assert.Contains(t, out, "done")
		assert.NotContains(t, out, "ROUTE", out)
		assert.Contains(t, out, "refused udp", out)
		time.Sleep(200 * time.Millisecond) // a datagram in flight
		assert.Equal(t, before, srv.hits.Load(), "the TCP listener saw nothing")
		assert.Zero(t, udpGot.Load(), "the UDP listener saw nothing")
	})
}

// TestRestrictedNetworkRealTools: git clone over HTTP, pip download and
// npm install from servers on loopback, all through the proxy.
func TestRestrictedNetworkRealTools(t *testing.T) {
	for _, tool := range []string{"git", "pip3", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (.ci/run installs it): %v", tool, err)
		}
	}
	files := t.TempDir()
	repo := filepath.Join(files, "repo.git")
	gitRun(t, "", "init", "-q", "--bare", repo)
	work := t.TempDir()
	gitRun(t, "", "clone", "-q", repo, work)
	require.NoError(t, os.WriteFile(filepath.Join(work, "README"), []byte("cloned through the proxy\n"), 0o644))
	gitRun(t, work, "add", "README")
	gitRun(t, work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
	gitRun(t, work, "push", "-q", "origin", "HEAD")
	gitRun(t, repo, "update-server-info") // the dumb HTTP protocol: static files
	require.NoError(t, os.WriteFile(filepath.Join(files, "tiny-1.0-py3-none-any.whl"), tinyWheel(t), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(files, "tiny-1.0.0.tgz"), tinyNpmPackage(t), 0o644))
	srv := newCountingServer(t, false, http.FileServer(http.Dir(files)))
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		require.NoError(t, os.WriteFile(filepath.Join(f.ws, "package.json"), []byte(`{"name":"ws","version":"1.0.0"}`), 0o644))
		base := "http://localhost:" + srv.port()
		script := fmt.Sprintf(`
git clone -q %[1]s/repo.git clone && cat clone/README
pip3 download -q --no-deps --no-cache-dir --disable-pip-version-check -d dl %[1]s/tiny-1.0-py3-none-any.whl && ls dl
npm install --no-audit --no-fund --no-update-notifier --cache "${TMPDIR:-/tmp}/npm-cache" %[1]s/tiny-1.0.0.tgz >/dev/null && cat node_modules/tiny/index.js
`, base)
		out, res, _ := f.restricted([]string{"localhost:" + srv.port()}, nil, script)
		assert.Equal(t, 0, res.ExitCode, out)
		assert.Contains(t, out, "cloned through the proxy", out)
		assert.Contains(t, out, "tiny-1.0-py3-none-any.whl", out)
		assert.Contains(t, out, "tiny from the proxy", out)
		assert.FileExists(t, filepath.Join(f.ws, "clone", "README"))
	})
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
}

// tinyWheel is the smallest wheel pip accepts.
func tinyWheel(t *testing.T) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for name, body := range map[string]string{
		"tiny/__init__.py":            "",
		"tiny-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tiny\nVersion: 1.0\n",
		"tiny-1.0.dist-info/WHEEL":    "Wheel-Version: 1.0\nGenerator: cordon-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
		"tiny-1.0.dist-info/RECORD":   "",
	} {
		w, err := z.Create(name)
		require.NoError(t, err)
		w.Write([]byte(body))
	}
	require.NoError(t, z.Close())
	return b.Bytes()
}

// tinyNpmPackage is an npm tarball: package/ with a package.json.
func tinyNpmPackage(t *testing.T) []byte {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{
		"package/package.json": `{"name":"tiny","version":"1.0.0","main":"index.js"}`,
		"package/index.js":     "module.exports = 'tiny from the proxy'\n",
	} {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}))
		tw.Write([]byte(body))
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return b.Bytes()
}

// TestRestrictedBridgeOutOfReach: the egress bridge runs beside the command
// under bwrap, outside its seccomp filter; the command cannot reach into it
// through /proc (its memory, descriptors, environment).
func TestRestrictedBridgeOutOfReach(t *testing.T) {
	f := newFixture(t, newBwrap())
	script := `
for p in /proc/[0-9]*; do
  if tr '\0' ' ' < $p/cmdline 2>/dev/null | grep -q -- --egress-bridge; then bridge=$p; fi
done
[ -n "$bridge" ] || { echo "no bridge"; exit 1; }
echo "bridge found"
head -c 1 $bridge/environ >/dev/null 2>&1 && echo "REACHED environ"
for fd in $bridge/fd/*; do readlink $fd >/dev/null 2>&1 && echo "REACHED $fd"; cat $fd </dev/null >/dev/null 2>&1 && echo "REACHED open $fd"; done
python3 -c "open('$bridge/mem','rb')" 2>/dev/null && echo "REACHED mem"
echo done`
	out, _, _ := f.restricted(nil, nil, script)
	assert.Contains(t, out, "bridge found")
	assert.Contains(t, out, "done")
	assert.NotContains(t, out, "REACHED", out)
}
