package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/cordonhq/cordon/internal/peer"
	"github.com/cordonhq/cordon/internal/principal"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/mark3labs/mcp-go/server"
)

// HTTPConfig configures the Streamable HTTP transport.
type HTTPConfig struct {
	Addr string
	// Token is the bearer token; "" generates one into <state-dir>/http-token.
	Token          string
	AllowedOrigins []string
	StateDir       string
	// Ready, if set, is told the listening address and the token file,
	// before the first request is served.
	Ready func(addr, tokenFile string)
	// TokensFile holds the principals' tokens; "" is <state-dir>/http-tokens.
	TokensFile string
	// IdleTimeout ends a token session that sees no request for that long
	// (0: never).
	IdleTimeout time.Duration
	// Drain, when it closes, begins a drain: /readyz 503, no new session,
	// up to DrainTimeout for the calls in flight, then the shutdown.
	Drain        <-chan struct{}
	DrainTimeout time.Duration
	// Replica, when set, prefixes every generated Mcp-Session-Id with
	// "Replica.", for a gateway that routes by it.
	Replica string
	// Probed says whether the sandbox probe passed, and if not why, for
	// /readyz; nil is always ready.
	Probed func() (bool, string)
}

// maxRequestBody bounds one request: large enough for write_file of a big
// file, small enough that a client cannot exhaust memory.
const maxRequestBody = 64 << 20

// ServeHTTP serves Streamable HTTP at /mcp, and /healthz and /readyz,
// until ctx ends or a drain is over, then shuts down:
// running commands are killed (their contexts end) and every session is
// closed.
func (s *Server) ServeHTTP(ctx context.Context, cfg HTTPConfig) error {
	loopback, err := isLoopback(cfg.Addr)
	if err != nil {
		return err
	}
	if !loopback && cfg.Token == "" {
		return fmt.Errorf("refusing to serve on %s, which is not a loopback address, without a configured bearer token: set CORDON_HTTP_TOKEN, or bind 127.0.0.1", cfg.Addr)
	}
	tokenFile := ""
	if cfg.Token == "" {
		cfg.Token, tokenFile, err = writeToken(cfg.StateDir)
		if err != nil {
			return err
		}
	}
	peers, err := peer.New(peer.Options{HelperArg: sandbox.HelperArg, SelfExe: "/proc/self/exe"})
	if err != nil {
		return fmt.Errorf("--http %s: cannot set up the check that refuses clients inside a cordon sandbox (is /proc mounted?): %w", cfg.Addr, err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("--http %s: %w", cfg.Addr, err)
	}
	opts := []server.StreamableHTTPOption{server.WithStateful(true), server.WithSessionIdleTTL(time.Hour)}
	if cfg.Replica != "" {
		if err := ValidateReplica(cfg.Replica); err != nil {
			ln.Close()
			return fmt.Errorf("--replica: %w", err)
		}
		opts = append(opts, server.WithSessionIdManager(&replicaIDs{prefix: cfg.Replica + "."}))
	}
	streamable := server.NewStreamableHTTPServer(s.mcp, opts...)
	mux := http.NewServeMux()
	allowed := append(ownOrigins(ln.Addr(), loopback), cfg.AllowedOrigins...)
	var cancels inflight
	if cfg.TokensFile == "" {
		cfg.TokensFile = filepath.Join(cfg.StateDir, principal.FileName)
	}
	s.principals = &principalFile{path: cfg.TokensFile}
	s.principals.refresh(s)
	s.overHTTP.Store(true)
	drain := newDrainState()
	mux.Handle("/mcp", s.authenticate(cfg.Token, refuseRebinding(loopback, allowed,
		readMessage(drain.track(s, requireSessionID(s.guardOwnership(s.checkCursor(cancels.track(cancelShim(streamable))))))))))
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz(drain, cfg.Probed))

	// Every request's context descends from base: cancelling it at
	// shutdown kills the commands that are still running.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv := &http.Server{Handler: s.refuseSandboxed(peers, mux), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return base },
		ConnContext: withConnPeer}
	// Ready learns the address before any request is served: the caller
	// may configure what a request sees by it (the port an egress proxy
	// must never reach).
	if cfg.Ready != nil {
		cfg.Ready(ln.Addr().String(), tokenFile)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	go s.watchPrincipals(base, cfg.IdleTimeout)
	s.log.Info().Str("addr", ln.Addr().String()).Str("token_file", tokenFile).Msg("serving MCP over HTTP at /mcp")
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	case <-cfg.Drain:
		s.log.Info().Dur("drain_timeout", cfg.DrainTimeout).Msg("draining: /readyz answers 503, no new session is opened, calls in flight may finish")
		if left := drain.drain(ctx, cfg.DrainTimeout); left > 0 {
			s.log.Warn().Int("calls", left).Msg("drain time over: ending the calls still running")
		} else {
			s.log.Info().Msg("drained: every call in flight finished")
		}
	}
	cancelBase()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	streamable.Shutdown(sctx)
	// Shutdown waits for connections it thinks are busy; a client that
	// opened one and never sent on it would hold us for the whole
	// timeout, so whatever is left then is closed outright.
	if err = srv.Shutdown(sctx); err != nil {
		srv.Close()
		err = nil
	}
	s.Close()
	return err
}

func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("--http %q: want HOST:PORT, e.g. 127.0.0.1:8765 (%v)", addr, err)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// writeToken generates a token into <state-dir>/http-token, mode 0600.
func writeToken(stateDir string) (token, path string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	token = hex.EncodeToString(b)
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", "", err
	}
	path = filepath.Join(stateDir, "http-token")
	tmp, err := os.CreateTemp(stateDir, ".http-token-*")
	if err != nil {
		return "", "", err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", "", err
	}
	if _, err := tmp.WriteString(token + "\n"); err != nil {
		tmp.Close()
		return "", "", err
	}
	if err := tmp.Close(); err != nil {
		return "", "", err
	}
	return token, path, os.Rename(tmp.Name(), path)
}

// needToken is the 401's message, in the body and in WWW-Authenticate's
// error_description (a quoted-string: no '"', no backslash).
const needToken = "cordon needs a bearer token, and OAuth is not offered: send the header " +
	"Authorization: Bearer TOKEN, where TOKEN is the content of <state-dir>/http-token " +
	"(by default $XDG_STATE_HOME/cordon/http-token, else ~/.local/state/cordon/http-token), " +
	"or the value of CORDON_HTTP_TOKEN when cordon serve was started with it"

// connPeer is what is known of one connection's client: its addresses,
// and once its first request has arrived, the verdict on it.
type connPeer struct {
	server, client netip.AddrPort
	once           sync.Once
	verdict        peer.Verdict
}

type connPeerKey struct{}

func withConnPeer(ctx context.Context, c net.Conn) context.Context {
	cp := &connPeer{}
	if l, ok := c.LocalAddr().(*net.TCPAddr); ok {
		cp.server = l.AddrPort()
	}
	if r, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		cp.client = r.AddrPort()
	}
	return context.WithValue(ctx, connPeerKey{}, cp)
}

// refuseSandboxed answers 403 to every request on a connection whose
// client runs inside a cordon sandbox, this server's or any other's: a
// confined command that reached the port with a token could otherwise
// open its own session and approve its own escalation. The client is
// judged once per connection, at its first request, in the connection's
// own goroutine; a refused connection is closed after the answer.
func (s *Server) refuseSandboxed(peers *peer.Checker, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			// They tell anyone only that cordon is up and ready, which a
			// confined command may know: a probe of another user (a
			// kubelet, a sidecar) is answered without the peer check.
			next.ServeHTTP(w, r)
			return
		}
		cp, ok := r.Context().Value(connPeerKey{}).(*connPeer)
		if !ok {
			http.Error(w, "forbidden: the connection's client cannot be identified", http.StatusForbidden)
			return
		}
		cp.once.Do(func() {
			start := time.Now()
			cp.verdict = peers.Check(cp.server, cp.client)
			s.logVerdict(cp, time.Since(start))
		})
		if cp.verdict.Refused {
			w.Header().Set("Connection", "close")
			http.Error(w, "forbidden: requests from inside a cordon sandbox are refused ("+cp.verdict.Reason+"). "+
				"A command that cordon confines cannot be a client of a cordon server; connect from outside every sandbox.", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) logVerdict(cp *connPeer, took time.Duration) {
	v := cp.verdict
	if v.Refused {
		s.log.Warn().Str("client", cp.client.String()).Int("pid", v.PID).Str("command", v.Command).
			Str("reason", v.Reason).Msg("refused an HTTP client: requests from inside a cordon sandbox are refused")
		return
	}
	s.log.Debug().Str("client", cp.client.String()).Int("pid", v.PID).Str("command", v.Command).
		Str("reason", v.Reason).Dur("took", took).Msg("HTTP client allowed")
}

// quoted quotes what a client sent, for an error message, so that it
// cannot pass for cordon's own words; a long one is cut short.
func quoted(v string) string {
	if len(v) > 200 {
		v = v[:200] + "…"
	}
	return strconv.Quote(v)
}
