// Package egress is cordon's egress proxy, the only way out of a sandbox
// whose network is "restricted": an HTTP proxy (CONNECT for TLS, absolute
// URIs for plain HTTP) and a SOCKS5 proxy on one listener, which let a
// connection through when its host is allowed and not denied, ask the
// human about any other host where someone can be asked, and otherwise
// refuse it with an answer that names the host and the config line that
// would allow it. The proxy resolves names itself, after the decision (a
// refused name is never looked up, so it cannot carry data out through
// DNS), and never connects a name to a loopback, link-local or private
// address or one of the machine's own interfaces, nor anything to
// cordon's own HTTP endpoint.
package egress

import (
	"bufio"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cordonhq/cordon/internal/netjoin"
	"github.com/cordonhq/cordon/internal/secrets"

	socks5 "github.com/armon/go-socks5"
)

// Decision is how a host was decided, as the session log records it.
type Decision string

// The decisions.
const (
	Allow      Decision = "allow"
	Deny       Decision = "deny"
	AskedAllow Decision = "asked-allow"
	AskedDeny  Decision = "asked-deny"
)

// Answer is the human's answer about an unlisted host.
type Answer int

// The answers.
const (
	Refuse       Answer = iota // not asked, or denied
	AllowOnce                  // for the rest of this call
	AllowSession               // added to the session's allowed domains
)

// Config is what one proxy enforces.
type Config struct {
	Rules Rules
	// Ask asks the human about an unlisted host while the connection
	// waits; nil when nobody can be asked during the call. host is always
	// one host name or IP address (never a pattern): the allowed_domains
	// entry "host:port" matches that host alone.
	Ask func(ctx context.Context, host string, port int) Answer
	// Decided is told, once per host and port, how it was decided.
	Decided func(host string, port int, d Decision)
	// Forbidden are cordon's own endpoints (its HTTP port), never
	// connected to whatever the rules say: that address, and on that
	// port every local one — all of loopback, the unspecified address and
	// each interface's — since a wildcard listener answers on all of
	// them and 127.0.0.2 or the host's own IP is one allowed_domains
	// entry away.
	Forbidden []netip.AddrPort
	// Resolve looks a name up; nil uses the system's resolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// ConfigHint is where the human allows a host, for the 403's text
	// (e.g. "~/.config/cordon/config.toml").
	ConfigHint string
	// Secrets, when not empty, has the proxy look inside every connection
	// (intercept.go): sentinels become real values for their hosts and
	// are refused everywhere else.
	Secrets *secrets.Vault
	// UpstreamRoots verify the hosts the proxy terminates TLS for; nil is
	// the system's roots (tests set their own).
	UpstreamRoots *x509.CertPool
	// SecretUsed is told of each secret put into a request to host (refusal
	// nil) and of each request refused for carrying a sentinel: name, never
	// value.
	SecretUsed func(host string, port int, name string, refusal *secrets.Refusal)
	// Token, when set, is what a client on the loopback port must present
	// (caller.go).
	Token string
}

// Proxy is a running egress proxy.
type Proxy struct {
	cfg   Config
	rules *ruleSet
	lns   []net.Listener
	socks *socks5.Server
	// socksAuth is socks asking for the token; socksEither takes a
	// client with credentials or without (the socket's, whose clients
	// carry the proxy variables' credentials but need none).
	socksAuth, socksEither *socks5.Server
	// tree is the call's process, whose descendants the unix socket
	// serves, once treeSet is closed (caller.go).
	tree     int
	treeSet  chan struct{}
	treeOnce sync.Once
	tr       *http.Transport

	mu      sync.Mutex
	once    map[string]bool     // hosts allowed for this call by the human
	decided map[string]Decision // host:port → the decision already logged
	blocked []string
	wg      sync.WaitGroup
	closed  bool
}

// Start starts a proxy listening on 127.0.0.1 (a free port) and, when
// unixPath is set, on that unix socket too (bwrap's sandboxes reach it
// through a bridge inside their network namespace).
func Start(cfg Config, unixPath string) (*Proxy, error) {
	rs, err := compile(cfg.Rules)
	if err != nil {
		return nil, err
	}
	if cfg.Resolve == nil {
		cfg.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	p := &Proxy{cfg: cfg, rules: rs, once: map[string]bool{}, decided: map[string]Decision{}, treeSet: make(chan struct{})}
	p.tr = &http.Transport{DialContext: p.dial, ForceAttemptHTTP2: false, DisableCompression: true,
		MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}
	p.socks, err = socks5.New(&socks5.Config{
		// Names reach Dial unresolved: the decision comes first.
		Resolver: noResolve{}, Dial: p.socksDial,
		Rules:  &socks5.PermitCommand{EnableConnect: true},
		Logger: log.New(io.Discard, "", 0), // stdout is MCP's
	})
	if err != nil {
		return nil, err
	}
	if cfg.Token != "" {
		withAuth := func(methods ...socks5.Authenticator) (*socks5.Server, error) {
			return socks5.New(&socks5.Config{
				Resolver: noResolve{}, Dial: p.socksDial,
				Rules:       &socks5.PermitCommand{EnableConnect: true},
				AuthMethods: methods,
				Logger:      log.New(io.Discard, "", 0),
			})
		}
		if p.socksAuth, err = withAuth(socks5.UserPassAuthenticator{Credentials: tokenCredentials(cfg.Token)}); err != nil {
			return nil, err
		}
		if p.socksEither, err = withAuth(socks5.NoAuthAuthenticator{}, socks5.UserPassAuthenticator{Credentials: anyCredentials{}}); err != nil {
			return nil, err
		}
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.lns = append(p.lns, tcp)
	if unixPath != "" {
		u, err := listenUnix(unixPath)
		if err != nil {
			tcp.Close()
			return nil, err
		}
		p.lns = append(p.lns, u)
	}
	for _, ln := range p.lns {
		p.wg.Add(1)
		go p.serve(ln)
	}
	return p, nil
}

// Port is the loopback port the proxy listens on.
func (p *Proxy) Port() int { return p.lns[0].Addr().(*net.TCPAddr).Port }

// Blocked lists the hosts refused so far, for the tool result.
func (p *Proxy) Blocked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.blocked)
}

// Close stops listening and ends every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for _, ln := range p.lns {
		ln.Close()
	}
	p.tr.CloseIdleConnections()
	p.wg.Wait()
}

func (p *Proxy) serve(ln net.Listener) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

// handle tells SOCKS5 (its first byte is the version, 5) from HTTP.
func (p *Proxy) handle(c net.Conn) {
	defer c.Close()
	must, served := p.mustAuthenticate(c)
	if !served {
		return
	}
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == 5 {
		s := p.socks
		switch _, viaSocket := c.(*net.UnixConn); {
		case must:
			s = p.socksAuth
		case viaSocket && p.socksEither != nil:
			s = p.socksEither
		}
		s.ServeConn(&bufferedConn{Conn: c, r: br})
		return
	}
	p.serveHTTP(c, br, must)
}

// serveHTTP answers proxy requests on one client connection until it
// ends; with must, each one presents the token.
func (p *Proxy) serveHTTP(c net.Conn, br *bufio.Reader, must bool) {
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if must && !p.authorized(req) {
			proxyAuthRequired(c)
			return
		}
		if req.Method == http.MethodConnect {
			p.connect(c, br, req)
			return
		}
		if !p.forward(c, req) {
			return
		}
	}
}

// connect opens a tunnel (HTTPS, or anything over CONNECT).
func (p *Proxy) connect(c net.Conn, br *bufio.Reader, req *http.Request) {
	target, err := p.dial(req.Context(), "tcp", req.Host)
	if err != nil {
		p.refuse(c, req.Host, err)
		return
	}
	defer target.Close()
	io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	if !p.cfg.Secrets.Empty() {
		host, port, _ := splitTarget(req.Host)
		p.intercept(&bufferedConn{Conn: c, r: br}, target, host, port)
		return
	}
	// A client may send its first bytes (a TLS hello) without waiting for
	// the 200: they are in br already. After them the tunnel joins the raw
	// connections, which the kernel splices.
	if n := br.Buffered(); n > 0 {
		early, _ := br.Peek(n)
		if _, err := target.Write(early); err != nil {
			return
		}
	}
	netjoin.Join(c, target)
}

// forward passes one plain HTTP request on and its answer back; it reports
// whether the client connection may carry another.
func (p *Proxy) forward(c net.Conn, req *http.Request) bool {
	if req.URL.Host == "" || req.URL.Scheme != "http" {
		writeStatus(c, http.StatusBadRequest, "cordon's proxy takes absolute http:// URIs and CONNECT; this request has neither\n")
		return false
	}
	req.RequestURI = ""
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Connection", "Keep-Alive"} {
		req.Header.Del(h)
	}
	host, port, _ := splitTarget(req.URL.Host)
	if req.URL.Port() == "" {
		host, port, _ = splitTarget(net.JoinHostPort(req.URL.Hostname(), "80"))
	}
	if !p.cfg.Secrets.Empty() {
		if err := p.checkPlain(req, host); err != nil {
			p.refuseSecret(c, host, port, err)
			return false
		}
	}
	resp, err := p.tr.RoundTrip(req)
	if err != nil {
		var sr *secrets.Refusal
		if errors.As((*guardedBody)(nil).err(req.Body), &sr) {
			p.refuseSecret(c, host, port, sr)
			return false
		}
		var r *refusal
		if errors.As(err, &r) {
			p.refuse(c, req.URL.Host, err)
			return !req.Close
		}
		writeStatus(c, http.StatusBadGateway, fmt.Sprintf("cordon's proxy could not reach %s: %v\n", req.URL.Host, err))
		return false
	}
	defer resp.Body.Close()
	resp.Body = bulkBody{resp.Body}
	if err := resp.Write(bulkWriter{c}); err != nil {
		return false
	}
	return !req.Close && !resp.Close
}

// refusal is a connection the rules (or the human) refused.
type refusal struct {
	host string
	port int
	why  string
}

func (r *refusal) Error() string { return r.why }

// refuse answers 403 with what was refused and how to allow it.
func (p *Proxy) refuse(c net.Conn, target string, err error) {
	var r *refusal
	if !errors.As(err, &r) {
		writeStatus(c, http.StatusBadGateway, fmt.Sprintf("cordon's proxy could not reach %s: %v\n", target, err))
		return
	}
	writeStatus(c, http.StatusForbidden, r.why+"\n")
}

func writeStatus(c net.Conn, code int, body string) {
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, http.StatusText(code), len(body), body)
}

// dial decides about host:port, then resolves and connects: the one door
// of every protocol the proxy speaks.
func (p *Proxy) dial(ctx context.Context, _, addr string) (net.Conn, error) {
	host, port, err := splitTarget(addr)
	if err != nil {
		return nil, err
	}
	if err := checkHost(host); err != nil {
		// Not a host: nobody is asked about it, and it is not listed as
		// blocked (the model would be told to have it allowed). Its bytes
		// (a SOCKS name may hold any) reach the logs quoted, never raw,
		// and the human's warning of a sentinel in it not at all: they
		// are the model's words, not cordon's.
		if name, ok := p.cfg.Secrets.HasSentinel([]byte(host)); ok && p.cfg.SecretUsed != nil {
			p.cfg.SecretUsed(strconv.Quote(host), port, name, &secrets.Refusal{Secret: name, Host: "a target that is not a host name", Where: "target's name"})
		}
		host = strconv.Quote(host)
		p.decide(host, port, Deny)
		return nil, &refusal{host: host, port: port,
			why: fmt.Sprintf("cordon: %s is not a host name or an IP address (%v): the proxy neither asks about it nor connects to it", host, err)}
	}
	if name, ok := p.cfg.Secrets.HasSentinel([]byte(host)); ok {
		// A name is looked up and sent as SNI before any request is
		// read: a sentinel in it goes nowhere, not even to DNS.
		p.decide(host, port, Deny)
		r := &secrets.Refusal{Secret: name, Host: host, Where: "host name"}
		if p.cfg.SecretUsed != nil {
			p.cfg.SecretUsed(host, port, name, r)
		}
		return nil, &refusal{host: host, port: port, why: r.Error()}
	}
	if err := p.admit(ctx, host, port); err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip.Unmap()}
	} else if ips, err = p.cfg.Resolve(ctx, host); err != nil {
		return nil, fmt.Errorf("resolving %s: %w", host, err)
	}
	var lastErr error = fmt.Errorf("%s has no address", host)
	for _, ip := range ips {
		ip = ip.Unmap()
		ap := netip.AddrPortFrom(ip, uint16(port))
		if p.ownEndpoint(ap) {
			lastErr = p.block(host, port, fmt.Sprintf("cordon: %s:%d is cordon's own endpoint, which no sandbox may reach", host, port))
			continue
		}
		if e := p.rules.deniedAddress(ip, port); e != nil {
			lastErr = p.block(host, port, fmt.Sprintf("cordon: %s resolves to %s, which denied_domains denies (%q): network = \"restricted\", and deny wins", host, ip, e.raw))
			continue
		}
		if !p.rules.allowsAddress(host, ip, port) && !p.humanNamed(host, ip, port) {
			lastErr = p.block(host, port, fmt.Sprintf(
				"cordon: %s resolves to %s, a loopback, link-local or private address or one of this machine's own, which a name never opens (cloud metadata and the host's services live there); only an allowed_domains entry naming %s itself, or localhost:%d, does", host, ip, ip, port))
			continue
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", ap.String())
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// splitTarget is host:port with the host in the one spelling the rules
// and the log use.
func splitTarget(addr string) (string, int, error) {
	h, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	host := normalizeHost(h)
	if ip, err := netip.ParseAddr(host); err == nil {
		// One spelling of an address, asked about and remembered:
		// 0:0:0:0:0:ffff:c000:202 is 192.0.2.2.
		host = ip.Unmap().String()
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("bad port in %q", addr)
	}
	return host, port, nil
}

// ownEndpoint reports whether ap is one of cordon's own endpoints
// (Config.Forbidden): the address itself, or any local address on its
// port.
func (p *Proxy) ownEndpoint(ap netip.AddrPort) bool {
	for _, f := range p.cfg.Forbidden {
		if ap == f || ap.Port() == f.Port() && local(ap.Addr()) {
			return true
		}
	}
	return false
}

// admit decides about host:port before anything is looked up.
func (p *Proxy) admit(ctx context.Context, host string, port int) error {
	v, e := p.rules.verdict(host, port)
	key := net.JoinHostPort(host, strconv.Itoa(port))
	switch v {
	case Denied:
		p.decide(host, port, Deny)
		return p.block(host, port, fmt.Sprintf("cordon: %s is denied by denied_domains (%q): network = \"restricted\", and deny wins", key, e.raw))
	case Allowed:
		p.decide(host, port, Allow)
		return nil
	}
	p.mu.Lock()
	asked := p.once[key]
	p.mu.Unlock()
	if asked {
		return nil
	}
	if p.cfg.Ask != nil {
		switch p.cfg.Ask(ctx, host, port) {
		case AllowOnce, AllowSession:
			p.mu.Lock()
			p.once[key] = true
			p.mu.Unlock()
			p.decide(host, port, AskedAllow)
			return nil
		}
		p.decide(host, port, AskedDeny)
		return p.block(host, port, fmt.Sprintf("cordon: the human did not allow %s (network = \"restricted\")", key))
	}
	p.decide(host, port, Deny)
	hint := p.cfg.ConfigHint
	if hint == "" {
		hint = "cordon's config"
	}
	return p.block(host, port, fmt.Sprintf("cordon: %s is not in allowed_domains (network = \"restricted\"); to allow it, add allowed_domains = [%q] to %s", key, host, hint))
}

// humanNamed reports whether the human allowed this very address: an IP,
// or localhost, asked about with its port, counts as naming it.
func (p *Proxy) humanNamed(host string, ip netip.Addr, port int) bool {
	if !namesAddress(host, ip) {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.once[net.JoinHostPort(host, strconv.Itoa(port))]
}

func (p *Proxy) decide(host string, port int, d Decision) {
	key := net.JoinHostPort(host, strconv.Itoa(port))
	p.mu.Lock()
	_, seen := p.decided[key]
	p.decided[key] = d
	p.mu.Unlock()
	if !seen && p.cfg.Decided != nil {
		p.cfg.Decided(host, port, d)
	}
}

func (p *Proxy) block(host string, port int, why string) error {
	key := net.JoinHostPort(host, strconv.Itoa(port))
	p.mu.Lock()
	if !slices.Contains(p.blocked, key) {
		p.blocked = append(p.blocked, key)
	}
	p.mu.Unlock()
	return &refusal{host: host, port: port, why: why}
}

// bufferedConn is a connection whose first bytes were peeked at.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// CloseWrite passes the target's end on to the client: the SOCKS5 server
// half-closes each side when the other finishes, and a client reading to
// EOF would otherwise wait for ever.
func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// noResolve leaves names to Dial, which decides before it looks them up.
type noResolve struct{}

func (noResolve) Resolve(ctx context.Context, _ string) (context.Context, net.IP, error) {
	return ctx, nil, nil
}
