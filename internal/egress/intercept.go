package egress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/cordonhq/cordon/internal/secrets"
)

// With secrets configured (Config.Secrets), the proxy looks inside every
// connection it lets through: TLS it terminates with the session's CA and
// re-encrypts to the real host, whose certificate it verifies; in each
// HTTP/1.1 request it puts a secret's real value in place of its sentinel
// when the host is one of the secret's, and refuses the request (403, never
// forwarded) when a sentinel goes anywhere else. A connection that is not
// HTTP inside TLS, or not TLS at all, is passed on only as long as no
// sentinel appears in it. Answers from a secret's hosts have the real
// value masked, so that an endpoint that echoes a request cannot hand it
// back to the sandbox. Nothing here fails open: what cannot be inspected
// is not forwarded.

// maxRewrittenBody is the largest request body held in memory to be
// rewritten; a larger one is streamed, and refused at the first sentinel.
const maxRewrittenBody = 1 << 20

// handshakeTimeout bounds each TLS handshake the proxy takes part in.
const handshakeTimeout = 30 * time.Second

// intercept carries one connection the rules let through, to host:port,
// with the secrets' sentinels replaced or refused.
func (p *Proxy) intercept(client, target net.Conn, host string, port int) {
	br := bufio.NewReader(client)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	cc := &bufferedConn{Conn: client, r: br}
	if first[0] != 0x16 { // not a TLS handshake record
		p.guardedJoin(cc, br, target, nil, host, port)
		return
	}
	leaf, err := p.cfg.Secrets.Leaf(host)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	defer cancel()
	down := tls.Server(cc, &tls.Config{Certificates: []tls.Certificate{*leaf},
		NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12})
	defer down.Close()
	if err := down.HandshakeContext(ctx); err != nil {
		return
	}
	up := tls.Client(target, &tls.Config{ServerName: host, RootCAs: p.cfg.UpstreamRoots,
		NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12})
	defer up.Close()
	if err := up.HandshakeContext(ctx); err != nil {
		writeStatus(down, http.StatusBadGateway, fmt.Sprintf("cordon's proxy could not reach %s over TLS: %v\n", host, err))
		return
	}
	p.relayHTTP(down, up, host, port)
}

// namesHost reports whether req names host, the connection's, in its Host
// header and in an absolute-form target, if it has one.
func namesHost(req *http.Request, host string) bool {
	same := func(hostport string) bool {
		h := hostport
		if hh, _, err := net.SplitHostPort(hostport); err == nil {
			h = hh
		}
		return strings.EqualFold(strings.TrimSuffix(h, "."), strings.TrimSuffix(host, "."))
	}
	return same(req.Host) && (req.URL.Host == "" || same(req.URL.Host))
}

// encodedAs is the first encoding other than identity among every
// Content-Encoding header of an answer ("" for none): a second header
// must not hide a gzip behind a first that says identity.
func encodedAs(h http.Header) string {
	for _, v := range h.Values("Content-Encoding") {
		for _, ce := range strings.Split(v, ",") {
			if ce = strings.TrimSpace(ce); ce != "" && !strings.EqualFold(ce, "identity") {
				return ce
			}
		}
	}
	return ""
}

// relayHTTP passes requests from the sandbox to host and answers back,
// one at a time, rewriting each.
func (p *Proxy) relayHTTP(down, up net.Conn, host string, port int) {
	v := p.cfg.Secrets
	dr, ur := bufio.NewReader(down), bufio.NewReader(up)
	// made are the encoded forms of values (a Basic credential) the proxy
	// made on this connection: a later answer (a pipelined request's, or
	// a HEAD's body taken for the next answer) may echo any of them.
	var made [][]byte
	for {
		req, err := http.ReadRequest(dr)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				writeStatus(down, http.StatusBadRequest, "cordon's proxy holds secrets for this session and passes only HTTP/1.1 inside TLS\n")
			}
			return
		}
		if strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
			// Answered here: the body is read whole before anything goes on.
			req.Header.Del("Expect")
			io.WriteString(down, "HTTP/1.1 100 Continue\r\n\r\n")
		}
		if v.SendsTo(host) && !namesHost(req, host) {
			// A front end that routes by Host (a CDN, a shared ingress)
			// would hand the injected value to the site the request
			// names, not to the host the connection and its secrets are
			// for.
			writeStatus(down, http.StatusMisdirectedRequest, fmt.Sprintf("cordon's proxy refused a request that names another host than %s, which this connection is for: a secret's value goes to its own hosts only\n", host))
			return
		}
		used, encoded, err := p.rewriteRequest(req, host)
		made = append(made, encoded...)
		if err != nil {
			p.refuseSecret(down, host, port, err)
			return
		}
		if v.SendsTo(host) {
			// An encoded answer could not be masked: ask for none. Nor
			// for another protocol (h2c, a WebSocket), whose frames and
			// compressed headers the masking cannot read either.
			req.Header.Set("Accept-Encoding", "identity")
			withoutUpgrade(req.Header)
		}
		if len(used) > 0 && p.cfg.SecretUsed != nil {
			for _, name := range used {
				p.cfg.SecretUsed(host, port, name, nil)
			}
		}
		if err := req.Write(up); err != nil {
			var r *secrets.Refusal
			if errors.As(err, &r) || errors.As((*guardedBody)(nil).err(req.Body), &r) {
				p.refuseSecret(down, host, port, r)
			}
			return
		}
		m, masks := v.Masker(made...), v.SendsTo(host)
		resp, err := http.ReadResponse(ur, req)
		for err == nil && isInterim(resp.StatusCode) {
			// An interim answer (100 Continue, 103 Early Hints) comes
			// before the final one to the same request: passed on, it
			// must not be taken for the final one, which would then
			// answer the sandbox's next request.
			if masks {
				maskAnswer(resp, m)
			}
			if _, werr := io.WriteString(down, "HTTP/1.1 "+resp.Status+"\r\n"); werr != nil || resp.Header.Write(down) != nil {
				return
			}
			if _, werr := io.WriteString(down, "\r\n"); werr != nil {
				return
			}
			resp, err = http.ReadResponse(ur, req)
		}
		if err != nil {
			// Go's words would quote what a secret's host sent, the value
			// perhaps in it, escaped past any masking (%q): none of them.
			why := ""
			if !masks {
				why = ": " + err.Error()
			}
			writeStatus(down, http.StatusBadGateway, fmt.Sprintf("cordon's proxy got no valid HTTP/1.1 answer from %s%s\n", host, why))
			return
		}
		if masks && resp.StatusCode == http.StatusSwitchingProtocols {
			resp.Body.Close()
			writeStatus(down, http.StatusBadGateway, fmt.Sprintf("cordon's proxy refused %s's switch to another protocol: it masks secrets in answers from their hosts and reads HTTP/1.1 only\n", host))
			return
		}
		if masks {
			if ce := encodedAs(resp.Header); ce != "" {
				resp.Body.Close()
				writeStatus(down, http.StatusBadGateway, fmt.Sprintf("cordon's proxy refused an answer from %s encoded as %q: it masks secrets in answers from their hosts and cannot look inside an encoded one\n", host, ce))
				return
			}
			maskAnswer(resp, m)
			resp.Body = struct {
				io.Reader
				io.Closer
			}{m.Reader(resp.Body), resp.Body}
		}
		if resp.StatusCode == http.StatusSwitchingProtocols {
			if resp.Write(down) == nil {
				p.guardedJoin(down, dr, up, ur, host, port)
			}
			return
		}
		err = resp.Write(bulkWriter{down})
		resp.Body.Close()
		if err != nil || req.Close || resp.Close {
			return
		}
	}
}

// withoutUpgrade takes from h every request to switch protocols.
func withoutUpgrade(h http.Header) {
	h.Del("Upgrade")
	h.Del("HTTP2-Settings")
	h.Del("Sec-WebSocket-Extensions")
	var keep []string
	for _, v := range h.Values("Connection") {
		for _, token := range strings.Split(v, ",") {
			if t := strings.TrimSpace(token); t != "" && !strings.EqualFold(t, "upgrade") && !strings.EqualFold(t, "http2-settings") {
				keep = append(keep, t)
			}
		}
	}
	h.Del("Connection")
	if len(keep) > 0 {
		h.Set("Connection", strings.Join(keep, ", "))
	}
}

// leftSentinel finds a sentinel that the rewriting left in req's head,
// in any case and percent-decoded too — the method, the target, a header's
// name or value, a Basic credential decoded — and says where: the proxy
// puts a value in place of its sentinel in a few places and one form, and
// a sentinel anywhere else is refused, never forwarded.
func leftSentinel(v *secrets.Vault, req *http.Request) (name, where string, ok bool) {
	type text struct{ where, s string }
	target := req.URL.RequestURI()
	texts := []text{{"method", req.Method}, {"URL", target}}
	if d, err := url.PathUnescape(target); err == nil {
		texts = append(texts, text{"URL", d})
	}
	if d, err := url.QueryUnescape(target); err == nil {
		texts = append(texts, text{"URL", d})
	}
	for k, vals := range req.Header {
		texts = append(texts, text{"header name", k})
		for _, val := range vals {
			texts = append(texts, text{"header " + k, val})
			if scheme, cred, found := strings.Cut(val, " "); found && strings.EqualFold(scheme, "basic") {
				if raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil {
					texts = append(texts, text{"header " + k, string(raw)})
				}
			}
		}
	}
	for _, t := range texts {
		if name, found := v.HasSentinel([]byte(t.s)); found {
			return name, t.where, true
		}
	}
	return "", "", false
}

// isInterim reports whether an answer's status is an interim one, which
// a final answer to the same request follows (101 ends HTTP instead).
func isInterim(code int) bool {
	return code >= 100 && code < 200 && code != http.StatusSwitchingProtocols
}

// maskAnswer hides m's strings in every part of resp's head the sandbox
// reads: header names and values, the status line's reason, and drops the
// trailers (they arrive after the body, past any masking of it).
func maskAnswer(resp *http.Response, m secrets.Masker) {
	masked := make(http.Header, len(resp.Header))
	for k, vals := range resp.Header {
		for _, val := range vals {
			masked[m.MaskFold(k)] = append(masked[m.MaskFold(k)], string(m.Mask([]byte(val))))
		}
	}
	resp.Header = masked
	resp.Status = string(m.Mask([]byte(resp.Status)))
	resp.Trailer = nil
}

// rewriteRequest puts the real values in req for host, or refuses it, and
// says which secrets it used and the encoded forms of them it made. It
// reads a body of up to maxRewrittenBody whole; a longer one is left to
// stream through a guard that refuses it at its first sentinel.
func (p *Proxy) rewriteRequest(req *http.Request, host string) (used []string, encoded [][]byte, err error) {
	v := p.cfg.Secrets
	out, u, err := v.Rewrite(host, secrets.Place{Where: "URL", URL: true}, []byte(req.RequestURI))
	if err != nil {
		return nil, nil, err
	}
	if len(u) > 0 {
		if req.URL, err = url.ParseRequestURI(string(out)); err != nil {
			// Never the parser's words: they quote the URL, the value in it.
			return nil, nil, errors.New("cordon: the request's URL is not valid once the secret's value is in it (percent-encoded): make the URL around the sentinel valid on its own")
		}
		used = append(used, u...)
	}
	if _, ok := v.HasSentinel([]byte(req.Host)); ok {
		return nil, nil, &secrets.Refusal{Secret: "?", Host: host, Where: "Host header"}
	}
	for name, vals := range req.Header {
		for i, val := range vals {
			at := secrets.Place{Where: "header " + name}
			out, u, err := v.Rewrite(host, at, []byte(val))
			if err != nil {
				return nil, nil, err
			}
			used = append(used, u...)
			val = string(out)
			if scheme, cred, ok := strings.Cut(val, " "); ok && strings.EqualFold(scheme, "basic") &&
				(strings.EqualFold(name, "Authorization") || strings.EqualFold(name, "Proxy-Authorization")) {
				// git and others send user:token base64-encoded.
				if raw, derr := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); derr == nil {
					out, u, err := v.Rewrite(host, at, raw)
					if err != nil {
						return nil, nil, err
					}
					if len(u) > 0 {
						cred := base64.StdEncoding.EncodeToString(out)
						val = scheme + " " + cred
						used = append(used, u...)
						encoded = append(encoded, []byte(cred))
					}
				}
			}
			req.Header[name][i] = val
		}
	}
	if name, where, ok := leftSentinel(v, req); ok {
		return nil, nil, v.Refuse(name, host, where)
	}
	req.Trailer = nil // arriving after the body, they could not be checked before it went
	if req.Body == nil || req.Body == http.NoBody {
		return used, encoded, nil
	}
	head, err := io.ReadAll(io.LimitReader(req.Body, maxRewrittenBody+1))
	if err != nil {
		return nil, nil, fmt.Errorf("cordon: reading the request's body: %w", err)
	}
	if len(head) > maxRewrittenBody {
		req.Body = &guardedBody{r: v.GuardReader(io.MultiReader(bytes.NewReader(head), req.Body), host, "body")}
		return used, encoded, nil
	}
	out, u, err = v.Rewrite(host, secrets.Place{Where: "body", Body: true}, head)
	if err != nil {
		return nil, nil, err
	}
	if name, ok := v.HasSentinel(out); ok {
		return nil, nil, v.Refuse(name, host, "body")
	}
	used = append(used, u...)
	req.Body, req.ContentLength, req.TransferEncoding = io.NopCloser(bytes.NewReader(out)), int64(len(out)), nil
	return used, encoded, nil
}

// guardedBody is a streamed body; it remembers the refusal that ended it,
// which Request.Write does not pass on as such.
type guardedBody struct {
	r   io.Reader
	c   io.Closer // the body beneath, if any
	mu  sync.Mutex
	bad error
}

func (g *guardedBody) Read(b []byte) (int, error) {
	n, err := g.r.Read(b)
	var r *secrets.Refusal
	if errors.As(err, &r) {
		g.mu.Lock()
		g.bad = err
		g.mu.Unlock()
	}
	return n, err
}

func (g *guardedBody) Close() error {
	if g.c != nil {
		return g.c.Close()
	}
	return nil
}

// err is the refusal that ended body, if body is a guardedBody.
func (*guardedBody) err(body io.Reader) error {
	if g, ok := body.(*guardedBody); ok {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.bad
	}
	return nil
}

// refuseSecret answers a request that carried a sentinel where it may not
// go, and has it logged.
func (p *Proxy) refuseSecret(down net.Conn, host string, port int, err error) {
	var r *secrets.Refusal
	if !errors.As(err, &r) {
		writeStatus(down, http.StatusBadRequest, string(p.cfg.Secrets.Mask([]byte(err.Error()+"\n"))))
		return
	}
	if p.cfg.SecretUsed != nil {
		p.cfg.SecretUsed(host, port, r.Secret, r)
	}
	writeStatus(down, http.StatusForbidden, r.Error()+"\n")
}

// guardedJoin joins two raw streams (not HTTP in TLS, or after a protocol
// switch); the sandbox's side stops at the first sentinel, which is never
// passed on, and both are closed. cr and tr hold bytes already read.
func (p *Proxy) guardedJoin(client net.Conn, cr *bufio.Reader, target net.Conn, tr *bufio.Reader, host string, port int) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var src io.Reader = target
		if tr != nil {
			src = tr
		}
		if v := p.cfg.Secrets; v.SendsTo(host) {
			src = v.MaskReader(src)
		}
		io.Copy(client, src)
		closeWrite(client)
	}()
	g := &guardedBody{r: p.cfg.Secrets.GuardReader(cr, host, "connection")}
	io.Copy(target, g)
	if r := g.err(g); r != nil {
		p.refuseSecret(nopWriteConn{client}, host, port, r)
		client.Close()
		target.Close()
	} else {
		closeWrite(target)
	}
	wg.Wait()
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// nopWriteConn writes nothing: in a raw stream the sandbox gets no HTTP
// answer, only the closed connection.
type nopWriteConn struct{ net.Conn }

func (nopWriteConn) Write(b []byte) (int, error) { return len(b), nil }

// socksDial is the SOCKS5 server's dial: with secrets, the connection it
// returns leads to intercept, not straight to the host.
func (p *Proxy) socksDial(ctx context.Context, network, addr string) (net.Conn, error) {
	target, err := p.dial(ctx, network, addr)
	if err != nil || p.cfg.Secrets.Empty() {
		return target, err
	}
	host, port, _ := splitTarget(addr)
	inner, outer := net.Pipe()
	go func() {
		defer inner.Close()
		defer target.Close()
		p.intercept(inner, target, host, port)
	}()
	return addrConn{Conn: outer, local: target.LocalAddr(), remote: target.RemoteAddr()}, nil
}

// addrConn is a pipe that reports the real connection's addresses (the
// SOCKS5 reply carries the local one, and expects TCP).
type addrConn struct {
	net.Conn
	local, remote net.Addr
}

func (c addrConn) LocalAddr() net.Addr  { return c.local }
func (c addrConn) RemoteAddr() net.Addr { return c.remote }

// checkPlain refuses a plain-HTTP request that carries a sentinel: a
// secret never travels in clear text, not even to its own hosts. A body
// is checked as it streams.
func (p *Proxy) checkPlain(req *http.Request, host string) error {
	v := p.cfg.Secrets
	texts := []string{req.URL.String(), req.Host}
	for _, vals := range req.Header {
		for _, val := range vals {
			texts = append(texts, val)
			if scheme, cred, ok := strings.Cut(val, " "); ok && strings.EqualFold(scheme, "basic") {
				if raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred)); err == nil {
					texts = append(texts, string(raw))
				}
			}
		}
	}
	for _, t := range texts {
		if name, ok := v.HasSentinel([]byte(t)); ok {
			return &secrets.Refusal{Secret: name, Host: host, Where: "request",
				Why: "over plain HTTP, where the proxy never puts a secret"}
		}
	}
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = &guardedBody{r: v.GuardReader(req.Body, host, "body"), c: req.Body}
	}
	return nil
}
