//go:build linux

package deploy_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordonhq/cordon/internal/testenv"
)

// The gateway tests start two real `cordon serve --http` replicas on
// loopback behind the real HAProxy with deploy/gateway/haproxy.cfg, and
// drive sessions of several principals in both protocol eras with a real
// MCP client. Each replica's workspace holds a file naming the replica, so
// every call says which replica answered it: a session, or a 2026-07-28
// principal, that moved would be seen at once.

const (
	era2025 = "2025-11-25"
	era2026 = "2026-07-28"
)

// principals: alice and bob are pinned in the gateway's map, carol and
// dave are not.
var pinned = map[string]string{"alice": "cordon-0", "bob": "cordon-1"}

type replica struct {
	name, addr string
}

type fleet struct {
	tokens  map[string]string // principal -> token
	mapFile string
	admin   string
}

func newFleet(t *testing.T) *fleet {
	f := &fleet{tokens: map[string]string{}, admin: randomToken(t)}
	var m strings.Builder
	for _, p := range []string{"alice", "bob", "carol", "dave"} {
		f.tokens[p] = randomToken(t)
		if r, ok := pinned[p]; ok {
			fmt.Fprintf(&m, "%s %s\n", digest(f.tokens[p]), r)
		}
	}
	f.mapFile = filepath.Join(t.TempDir(), "principals.map")
	require.NoError(t, os.WriteFile(f.mapFile, []byte(m.String()), 0o644))
	return f
}

func randomToken(t *testing.T) string {
	b := make([]byte, 24)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

func digest(token string) string {
	d := sha256.Sum256([]byte(token))
	return hex.EncodeToString(d[:])
}

// tokensFile is what `cordon token add` would have written for every
// principal: digests only.
func (f *fleet) tokensFile() string {
	var b strings.Builder
	for p, tok := range f.tokens {
		fmt.Fprintf(&b, "%s sha256:%s\n", p, digest(tok))
	}
	return b.String()
}

var servingAt = regexp.MustCompile(`"addr":"([^"]+)"[^\n]*serving MCP over HTTP`)

// startReplica runs `cordon serve --http 127.0.0.1:0` (with --replica NAME
// when prefixed) and waits until /readyz says the sandbox probe passed.
func (f *fleet) startReplica(t *testing.T, name string, prefixed bool) replica {
	t.Helper()
	root := t.TempDir()
	ws, state := filepath.Join(root, "work space"), filepath.Join(root, "state")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	require.NoError(t, os.MkdirAll(state, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "replica.txt"), []byte("replica="+name+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(state, "http-tokens"), []byte(f.tokensFile()), 0o600))
	args := []string{"serve", "--http", "127.0.0.1:0", "--workspace", ws, "--state-dir", state, "--log-level", "info"}
	if prefixed {
		args = append(args, "--replica", name)
	}
	cmd := exec.Command(cordonBin(), args...)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "CORDON_HTTP_TOKEN="+f.admin)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	addrc := make(chan string, 1)
	var logMu sync.Mutex
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := servingAt.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
		}
	}()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			logMu.Lock()
			t.Logf("replica %s log:\n%s", name, log.String())
			logMu.Unlock()
		}
	})
	var addr string
	select {
	case addr = <-addrc:
	case <-exited:
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf("replica %s exited at start:\n%s", name, log.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("replica %s did not start serving within 60 s", name)
	}
	waitFor(t, "replica "+name+" ready", func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return replica{name: name, addr: addr}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 60 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// startHAProxy runs haproxy in the foreground with cfg and the environment
// the shipped configuration reads, and returns the gateway's MCP URL.
func (f *fleet) startHAProxy(t *testing.T, haproxy, cfg string, r0, r1 replica) string {
	t.Helper()
	bind := freePort(t)
	cmd := exec.Command(haproxy, "-db", "-f", cfg)
	cmd.Env = append(os.Environ(), "GATEWAY_BIND="+bind, "CORDON_0="+r0.addr, "CORDON_1="+r1.addr,
		"CORDON_PRINCIPALS_MAP="+f.mapFile)
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("haproxy log:\n%s", log.String())
		}
	})
	waitFor(t, "haproxy listening", func() bool {
		select {
		case <-exited:
			t.Fatalf("haproxy exited at start:\n%s", log.String())
		default:
		}
		c, err := net.Dial("tcp", bind)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
	return "http://" + bind + "/mcp"
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func connect(url, token, era string) (*mcp.ClientSession, error) {
	// A new connection for every request: a gateway keeps a kept-alive
	// client connection on the server it chose first, which would hide a
	// routing that loses sessions (and clients behind one proxy share
	// connections anyway).
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{
		Transport: bearer{token, &http.Transport{DisableKeepAlives: true}}}}
	c := mcp.NewClient(&mcp.Implementation{Name: "cordon-gateway-test", Version: "1"},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: era})
}

var replicaSaid = regexp.MustCompile(`replica=([A-Za-z0-9-]+)`)

// whichReplica asks, through a confined command, which replica serves.
func whichReplica(cs *mcp.ClientSession) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "cat replica.txt"}})
	if err != nil {
		return "", err
	}
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	m := replicaSaid.FindStringSubmatch(strings.Join(out, "\n"))
	if res.IsError || m == nil {
		return "", fmt.Errorf("the call failed: %s", strings.Join(out, "\n"))
	}
	return m[1], nil
}

// openSession is a 2025-11-25 session and the replica that answered its
// first call.
type openSession struct {
	principal string
	cs        *mcp.ClientSession
	first     string
}

// driveSessions2025 opens perPrincipal sessions for each principal, then
// makes calls calls in every one of them, interleaved: it returns, per
// principal, the replica that answered all of each session's calls, or an
// error saying how a session was lost.
func driveSessions2025(f *fleet, url string, perPrincipal, calls int) (map[string][]string, error) {
	var open []*openSession
	defer func() {
		for _, s := range open {
			s.cs.Close()
		}
	}()
	// One principal's sessions one after the other: the unpinned ones
	// then alternate between the replicas.
	for _, p := range []string{"alice", "bob", "carol", "dave"} {
		for range perPrincipal {
			cs, err := connect(url, f.tokens[p], era2025)
			if err != nil {
				return nil, fmt.Errorf("%s: initialize: %w", p, err)
			}
			open = append(open, &openSession{principal: p, cs: cs})
		}
	}
	// The calls of all sessions interleaved.
	for i := range calls {
		for _, s := range open {
			r, err := whichReplica(s.cs)
			if err != nil {
				return nil, fmt.Errorf("%s's session %s, call %d: %w", s.principal, s.cs.ID(), i+1, err)
			}
			if s.first == "" {
				s.first = r
			} else if r != s.first {
				return nil, fmt.Errorf("%s's session %s moved from %s to %s at call %d", s.principal, s.cs.ID(), s.first, r, i+1)
			}
		}
	}
	seen := map[string][]string{}
	for _, s := range open {
		if strings.Contains(s.cs.ID(), ".") && !strings.HasPrefix(s.cs.ID(), s.first+".") {
			return nil, fmt.Errorf("%s's session %s was served by %s", s.principal, s.cs.ID(), s.first)
		}
		seen[s.principal] = append(seen[s.principal], s.first)
	}
	return seen, nil
}

// drivePrincipals2026 connects each principal clients times on
// 2026-07-28 and makes calls calls in each: a principal must be served by
// one replica throughout.
func drivePrincipals2026(f *fleet, url string, clients, calls int) (map[string]string, error) {
	return drivePrincipalsOf(f, url, []string{"alice", "bob", "carol", "dave"}, clients, calls)
}

func drivePrincipalsOf(f *fleet, url string, principals []string, clients, calls int) (map[string]string, error) {
	served := map[string]string{}
	for _, p := range principals {
		for c := range clients {
			cs, err := connect(url, f.tokens[p], era2026)
			if err != nil {
				return nil, fmt.Errorf("%s: connect: %w", p, err)
			}
			for i := range calls {
				r, err := whichReplica(cs)
				if err != nil {
					cs.Close()
					return nil, fmt.Errorf("%s, client %d, call %d: %w", p, c+1, i+1, err)
				}
				if served[p] == "" {
					served[p] = r
				} else if served[p] != r {
					cs.Close()
					return nil, fmt.Errorf("principal %s moved from %s to %s (client %d, call %d)", p, served[p], r, c+1, i+1)
				}
			}
			cs.Close()
		}
	}
	return served, nil
}

func needHAProxy(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("haproxy")
	if err != nil {
		testenv.SkipUnlessCI(t, "haproxy is not installed (apt-get install haproxy)")
	}
	return path
}

// TestGatewayHAProxy: through deploy/gateway/haproxy.cfg every 2025-11-25
// session stays on its replica, whether the gateway routes it by the
// --replica prefix of its id or by the id learnt from the initialize
// response; pinned principals land on their replica in both eras; an
// unpinned 2026-07-28 principal stays on one replica.
func TestGatewayHAProxy(t *testing.T) {
	haproxy := needHAProxy(t)
	cfg, err := filepath.Abs("gateway/haproxy.cfg")
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		prefixed bool
	}{{"replica prefix", true}, {"learnt from initialize", false}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFleet(t)
			r0, r1 := f.startReplica(t, "cordon-0", tc.prefixed), f.startReplica(t, "cordon-1", tc.prefixed)
			url := f.startHAProxy(t, haproxy, cfg, r0, r1)

			seen, err := driveSessions2025(f, url, 4, 3)
			require.NoError(t, err)
			for p, want := range pinned {
				for _, r := range seen[p] {
					assert.Equal(t, want, r, "a session of %s, pinned to %s", p, want)
				}
			}
			// Unpinned sessions were spread over both replicas: the
			// stickiness above was needed, not luck. (Round robin
			// alternates them, unless a health check on a busy machine
			// took a replica out for a moment: both, not two each.)
			for _, p := range []string{"carol", "dave"} {
				assert.Subset(t, seen[p], []string{"cordon-0", "cordon-1"}, "%s's four sessions, one after the other", p)
			}

			served, err := drivePrincipals2026(f, url, 3, 2)
			require.NoError(t, err)
			for p, want := range pinned {
				assert.Equal(t, want, served[p], "2026-07-28 principal %s", p)
			}
		})
	}
}

// TestGatewayNaiveLosesSessions is the control: a balancer that picks a
// replica per request (what a Service or an unconfigured load balancer
// does; uniformly random, one draw: round robin can fall in step with
// the calls, and two draws prefer one idle server) loses
// 2025-11-25 sessions and moves 2026-07-28 principals, and the checks
// above see it.
func TestGatewayNaiveLosesSessions(t *testing.T) {
	haproxy := needHAProxy(t)
	naive := filepath.Join(t.TempDir(), "naive.cfg")
	require.NoError(t, os.WriteFile(naive, []byte(`
defaults
    mode http
    timeout connect 5s
    timeout client 1m
    timeout server 1m
frontend mcp
    bind "${GATEWAY_BIND}"
    default_backend pool
backend pool
    balance random(1)
    server cordon-0 "${CORDON_0}"
    server cordon-1 "${CORDON_1}"
`), 0o644))
	f := newFleet(t)
	r0, r1 := f.startReplica(t, "cordon-0", true), f.startReplica(t, "cordon-1", true)
	url := f.startHAProxy(t, haproxy, naive, r0, r1)
	_, err := driveSessions2025(f, url, 1, 3)
	require.Error(t, err, "round robin kept every session on its replica: the test could not tell")
	t.Logf("as expected: %v", err)
	_, err = drivePrincipals2026(f, url, 2, 2)
	require.Error(t, err, "round robin kept every principal on one replica: the test could not tell")
	t.Logf("as expected: %v", err)
}

// TestGatewayNginx: through deploy/gateway/nginx.conf (the shipped file,
// with this test's addresses) every 2025-11-25 session of replicas started
// with --replica stays on its replica, and a 2026-07-28 principal on one.
func TestGatewayNginx(t *testing.T) {
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		testenv.SkipUnlessCI(t, "nginx is not installed (apt-get install nginx)")
	}
	conf, err := os.ReadFile("gateway/nginx.conf")
	require.NoError(t, err)
	f := newFleet(t)
	r0, r1 := f.startReplica(t, "cordon-0", true), f.startReplica(t, "cordon-1", true)
	bind := freePort(t)
	local := strings.NewReplacer("127.0.0.1:8765", r0.addr, "127.0.0.1:8766", r1.addr,
		"listen 127.0.0.1:8080", "listen "+bind).Replace(string(conf))
	require.NotEqual(t, string(conf), local)
	prefix := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(prefix, "tmp"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(prefix, "nginx.conf"), []byte(local), 0o644))
	cmd := exec.Command(nginx, "-p", prefix, "-c", filepath.Join(prefix, "nginx.conf"), "-g", "daemon off;")
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("nginx log:\n%s", log.String())
		}
	})
	waitFor(t, "nginx listening", func() bool {
		select {
		case <-exited:
			t.Fatalf("nginx exited at start:\n%s", log.String())
		default:
		}
		c, err := net.Dial("tcp", bind)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
	url := "http://" + bind + "/mcp"
	seen, err := driveSessions2025(f, url, 4, 3)
	require.NoError(t, err)
	for p, rs := range seen {
		// nginx pins no principal: every principal's sessions, one after
		// the other, go to both replicas in turn.
		assert.Subset(t, rs, []string{"cordon-0", "cordon-1"}, "%s's sessions", p)
	}
	_, err = drivePrincipals2026(f, url, 3, 2)
	require.NoError(t, err)
}
