package sandbox

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"

	"crypto/x509"

	"github.com/cordonhq/cordon/internal/egress"
	"github.com/cordonhq/cordon/internal/secrets"
)

// A command under network restricted reaches the outside only through an
// egress proxy that lives as long as its call: started when the command
// is prepared, closed when it ends. The backends see its endpoint in the
// policy and leave the command no other route.

// EgressHooks are the caller's side of a call's egress proxy.
type EgressHooks struct {
	// Ask asks the human about a host the lists do not name, while the
	// connection waits; nil refuses such hosts.
	Ask func(ctx context.Context, host string, port int) egress.Answer
	// Decided is told once per host and port how it was decided (the
	// session log's network/decision).
	Decided func(host string, port int, d egress.Decision)
	// Forbidden are addresses never connected to (cordon's own HTTP
	// endpoint).
	Forbidden []netip.AddrPort
	// ConfigHint is the file a 403 tells the human to allow a host in.
	ConfigHint string
	// Secrets are the session's secrets: the command sees their
	// sentinels, and the proxy terminates TLS with their CA (secrets.go).
	Secrets *secrets.Vault
	// SecretUsed is told of each secret put into a request, and of each
	// request refused for carrying a sentinel (refusal set).
	SecretUsed func(host string, port int, name string, refusal *secrets.Refusal)
	// UpstreamRoots verify the real hosts behind the terminated TLS; nil
	// is the system's roots (tests give their server's).
	UpstreamRoots *x509.CertPool
	// Resolve looks a name up for the proxy; nil is the system's
	// resolver (tests give the names of their servers).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
}

// egressSocketDir is where, inside bwrap, the directory of the proxy's
// unix socket is bound read-only: the command cannot replace the socket
// with one of its own choosing for the bridge to connect to.
const egressSocketDir = "/tmp/.cordon-egress"

// egressEndpoint is a call's running proxy.
type egressEndpoint struct {
	proxy *egress.Proxy
	// listenPort is the proxy's loopback port.
	listenPort int
	// dir holds the proxy's unix socket on the host, and the trust
	// bundle with secrets ("" without either).
	dir string
	// secrets are the session's, nil without any.
	secrets *secrets.Vault
	// bundleInside is the trust bundle's path as the command sees it.
	bundleInside string
	// masked maps each secret file (its canonical path) to the copy with
	// sentinels in dir that bwrap binds over it (secrets.go).
	masked map[string]string
	// token is what the command presents to the proxy's loopback port,
	// in its proxy variables, when the proxy holds secrets
	// (internal/egress/caller.go).
	token string
}

// startEgress starts the proxy for one call of p, with a unix socket
// beside its loopback port when the backend gives the command a network
// namespace of its own (bwrap), where only the socket reaches it.
func startEgress(p ExecutionPolicy, hooks EgressHooks, withSocket bool) (*egressEndpoint, error) {
	ep := &egressEndpoint{}
	var sock string
	withSecrets := !hooks.Secrets.Empty()
	if withSocket || withSecrets {
		dir, err := egressDir(p, withSocket)
		if err != nil {
			return nil, fmt.Errorf("egress proxy: %w", err)
		}
		ep.dir = dir
	}
	if withSecrets {
		ep.token = rand.Text()
	}
	if withSocket {
		sock = filepath.Join(ep.dir, "s")
	}
	if withSecrets {
		if err := ep.withSecrets(hooks.Secrets, withSocket, p); err != nil {
			ep.close()
			return nil, fmt.Errorf("egress proxy: %w", err)
		}
	}
	proxy, err := egress.Start(egress.Config{
		Rules:         egress.Rules{Allowed: p.AllowedDomains, Denied: p.DeniedDomains},
		Ask:           hooks.Ask,
		Decided:       hooks.Decided,
		Forbidden:     hooks.Forbidden,
		ConfigHint:    hooks.ConfigHint,
		Secrets:       ep.secrets,
		SecretUsed:    hooks.SecretUsed,
		UpstreamRoots: hooks.UpstreamRoots,
		Resolve:       hooks.Resolve,
		Token:         ep.token,
	}, sock)
	if err != nil {
		ep.close()
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	ep.proxy, ep.listenPort = proxy, proxy.Port()
	return ep, nil
}

// egressDir makes a call's private directory for the proxy. Under bwrap
// (withSocket) it holds what bwrap binds into the sandbox — the proxy's
// socket, the trust bundle, the stub's resolv.conf, the secrets' masked
// copies — and lies in cordon's state directory, which no command of any
// session, mode or backend can write (a command that could write in it
// could put a link to any file where bwrap binds from) or, but for what
// bwrap binds, read. Elsewhere it holds the trust bundle alone, which the
// command reads where it lies.
func egressDir(p ExecutionPolicy, withSocket bool) (string, error) {
	if !withSocket {
		return os.MkdirTemp("", "cordon-egress-")
	}
	if p.StateDir == "" {
		return "", errors.New("no state directory to hold the proxy's socket")
	}
	parent := filepath.Join(p.StateDir, "egress")
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", err
	}
	return os.MkdirTemp(parent, "")
}

// port is the proxy's loopback port, the one the command is given.
func (ep *egressEndpoint) port() int { return ep.listenPort }

// socketInside is the proxy's socket as the bwrap sandbox sees it.
func (ep *egressEndpoint) socketInside() string { return egressSocketDir + "/s" }

// env points every common HTTP client at the proxy, and clears the
// exceptions a client would connect to directly.
func (ep *egressEndpoint) env() []string {
	at := "127.0.0.1:" + strconv.Itoa(ep.port())
	if ep.token != "" {
		at = "cordon:" + ep.token + "@" + at
	}
	http, socks := "http://"+at, "socks5h://"+at
	env := []string{
		"HTTP_PROXY=" + http, "HTTPS_PROXY=" + http, "ALL_PROXY=" + socks,
		"http_proxy=" + http, "https_proxy=" + http, "all_proxy=" + socks,
		"NO_PROXY=", "no_proxy=",
	}
	return append(env, ep.secretEnv()...)
}

// serveTree has the proxy's socket serve the descendants of pid, the
// call's process, alone.
func (ep *egressEndpoint) serveTree(pid int) {
	if ep != nil && ep.proxy != nil {
		ep.proxy.ServeTree(pid)
	}
}

// blocked lists the hosts refused so far.
func (ep *egressEndpoint) blocked() []string {
	if ep == nil || ep.proxy == nil {
		return nil
	}
	return ep.proxy.Blocked()
}

func (ep *egressEndpoint) close() {
	if ep == nil {
		return
	}
	if ep.proxy != nil {
		ep.proxy.Close()
	}
	if ep.dir != "" {
		os.RemoveAll(ep.dir)
	}
}

// ParseDomain checks an allowed_domains or denied_domains entry.
func ParseDomain(s string) error { return egress.ParseEntry(s) }

// EgressEnforcer says, for status, who keeps a network-restricted command
// on the egress proxy under the named backend.
func EgressEnforcer(backend string) string {
	switch backend {
	case "bwrap":
		return "cordon's egress proxy; bwrap gives the command a network namespace of its own where only the proxy's port leads out, and seccomp allows no socket but IPv4 TCP and netlink"
	case "landlock":
		return "cordon's egress proxy; Landlock allows TCP connect to the proxy's port only (partial: not per host on that port), and seccomp allows no socket but IPv4 TCP and netlink"
	case "seatbelt":
		return "cordon's egress proxy; Seatbelt allows outbound connections to the proxy's loopback port only"
	}
	return "nobody: the command runs unconfined"
}

// ProxyIgnored says, for status, what a program that ignores the proxy
// variables gets under network restricted with the named backend.
func ProxyIgnored(backend string) string {
	if backend == "bwrap" {
		return "captured: names resolve (through cordon's stub DNS) to stand-in addresses, and connections to them on ports 80 and 443 go through the egress proxy, decided by the same lists and the same question; any other port, or an IP address given directly, gets no network"
	}
	return "no network at all: its connections are refused (" + backend + " gives the command no network namespace of its own, so cordon cannot capture them); point it at the proxy variables"
}
