package egress

import (
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A proxy serves one call's command, and with secrets it puts their values
// into requests: a command of another session that finds the proxy (its
// loopback port, its socket's path in /proc/net/unix) must not have them
// put in for it. So a client on the loopback port presents the call's
// token (Config.Token: the password of HTTP Proxy-Authorization Basic, or
// of SOCKS5's username/password method), which only the call's command
// has, in its proxy variables; and a client on the unix socket, which
// only bwrap's bridge inside the sandbox uses, must be in a pid namespace
// below cordon's and descend from the call's process (ServeTree): a
// process of the host, a Landlock sandbox's included, is not, nor one of
// another sandbox, nor one that made a pid namespace of its own.

// tokenCredentials accepts any user name with the token as password.
type tokenCredentials string

func (t tokenCredentials) Valid(_, password string) bool {
	return subtle.ConstantTimeCompare([]byte(password), []byte(t)) == 1
}

// anyCredentials accepts any: on the socket the peer is what is checked.
type anyCredentials struct{}

func (anyCredentials) Valid(_, _ string) bool { return true }

// authorized reports whether req presents the token.
func (p *Proxy) authorized(req *http.Request) bool {
	scheme, cred, ok := strings.Cut(req.Header.Get("Proxy-Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "basic") {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return false
	}
	_, password, _ := strings.Cut(string(raw), ":")
	return tokenCredentials(p.cfg.Token).Valid("", password)
}

// mustAuthenticate reports whether a client on c must present the token,
// and whether it may be served at all.
func (p *Proxy) mustAuthenticate(c net.Conn) (must, served bool) {
	if _, viaSocket := c.(*net.UnixConn); viaSocket {
		pid, ok := fromSandbox(c)
		return false, ok && p.inTree(pid)
	}
	return p.cfg.Token != "", true
}

// treeWait bounds how long a socket client waits for ServeTree: the call
// names its process as soon as it has started it.
const treeWait = 10 * time.Second

// ServeTree has the unix socket serve the descendants of pid, the call's
// process, alone.
func (p *Proxy) ServeTree(pid int) {
	p.treeOnce.Do(func() {
		p.tree = pid
		close(p.treeSet)
	})
}

// inTree reports whether pid descends from the process ServeTree named.
func (p *Proxy) inTree(pid int) bool {
	select {
	case <-p.treeSet:
	case <-time.After(treeWait):
		return false
	}
	return descends(pid, p.tree)
}

// proxyAuthRequired asks for the token.
func proxyAuthRequired(c net.Conn) {
	const body = "cordon's proxy serves its own command only: use the proxy variables cordon set (HTTP_PROXY and the others), which carry its credentials\n"
	c.Write([]byte("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"cordon\"\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body))
}

// maxSocketPath is what a unix socket's path may hold (sun_path, less its
// terminating NUL, on Linux).
const maxSocketPath = 107

// listenUnix listens on a unix socket at path, mode 0600. A path too long
// for a socket (a state directory deep in a home) is reached through the
// directory's descriptor, /proc/self/fd/N/NAME, which the kernel resolves
// to the same place; the listener then never unlinks by that path, whose
// N another descriptor may hold later (the directory is the caller's to
// remove).
func listenUnix(path string) (net.Listener, error) {
	os.Remove(path)
	at := path
	if len(path) > maxSocketPath {
		dir, err := os.Open(filepath.Dir(path))
		if err != nil {
			return nil, err
		}
		defer dir.Close()
		at = "/proc/self/fd/" + strconv.Itoa(int(dir.Fd())) + "/" + filepath.Base(path)
	}
	ln, err := net.Listen("unix", at)
	if err != nil {
		return nil, err
	}
	if at != path {
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}
