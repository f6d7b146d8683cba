package secrets

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Refusal is a sentinel found on its way where its secret may not go. It
// names the secret and the host, never the value.
type Refusal struct {
	Secret string
	Host   string
	// Where in the request: "header Authorization", "body", "URL", …
	Where string
	// Why is set when the host is the secret's own but the place is not
	// one the proxy injects into.
	Why string
}

func (r *Refusal) Error() string {
	if r.Why != "" {
		return fmt.Sprintf("cordon: the sentinel of secret %s was sent to %s in the %s, %s; the request was not forwarded", r.Secret, r.Host, r.Where, r.Why)
	}
	return fmt.Sprintf("cordon: the sentinel of secret %s was sent to %s in the %s, which is not one of the secret's hosts; the request was not forwarded", r.Secret, r.Host, r.Where)
}

// Place is where in a request text is, which decides whether a sentinel
// there may be replaced.
type Place struct {
	Where string
	Body  bool
	// URL puts the value in percent-encoded (urlEncoded).
	URL bool
}

// Rewrite replaces, in b bound for host, each sentinel whose secret may be
// sent there; a sentinel that may not go there is a *Refusal and nothing
// is returned. used names the secrets put in. b is not modified.
func (v *Vault) Rewrite(host string, at Place, b []byte) (out []byte, used []string, err error) {
	if v.Empty() || !bytes.Contains(b, []byte(sentinelPrefix)) {
		return b, nil, nil
	}
	out = b
	for _, e := range v.entries {
		if !bytes.Contains(out, []byte(e.sentinel)) {
			continue
		}
		if !e.sendsTo(host) {
			return nil, nil, &Refusal{Secret: e.Name, Host: host, Where: at.Where}
		}
		if at.Body && !e.InjectBody || at.URL && !e.InjectURL {
			return nil, nil, &Refusal{Secret: e.Name, Host: host, Where: at.Where, Why: e.injectedWhere()}
		}
		value := e.Value
		if at.URL {
			value = urlEncoded(value, upperHex)
		}
		out = bytes.ReplaceAll(out, []byte(e.sentinel), value)
		used = append(used, e.Name)
	}
	return out, used, nil
}

// injectedWhere says, for a refusal, where the proxy puts e's value.
func (e entry) injectedWhere() string {
	places := "headers"
	switch {
	case e.InjectBody && e.InjectURL:
		return "" // everywhere: never a refusal of place
	case e.InjectBody:
		places += " and bodies (inject_url = false)"
	case e.InjectURL:
		places += " and the URL (inject_body = false)"
	default:
		places += " only (inject_body and inject_url are false)"
	}
	return "and the secret is injected into " + places
}

// HasSentinel reports whether b holds any sentinel of the vault, in any
// case (a host name, or a host that folds case, reads CORDON-SENTINEL-…
// as the sentinel).
func (v *Vault) HasSentinel(b []byte) (string, bool) {
	if v.Empty() {
		return "", false
	}
	lower := bytes.ToLower(b)
	for _, e := range v.entries {
		if bytes.Contains(lower, []byte(e.sentinel)) {
			return e.Name, true
		}
	}
	return "", false
}

// Refuse is the refusal of secret name's sentinel found at where in a
// request to host: one of its hosts (a place or form the proxy puts no
// value in), or another.
func (v *Vault) Refuse(name, host, where string) *Refusal {
	r := &Refusal{Secret: name, Host: host, Where: where}
	for _, e := range v.entries {
		if e.Name == name && e.sendsTo(host) {
			r.Why = "a place or a form in which the proxy puts no value in place of a sentinel"
		}
	}
	return r
}

// SendsTo reports whether some secret may be sent to host: only then does
// an answer from host need masking.
func (v *Vault) SendsTo(host string) bool {
	if v == nil {
		return false
	}
	for _, e := range v.entries {
		if e.sendsTo(host) {
			return true
		}
	}
	return false
}

func (e entry) sendsTo(host string) bool {
	for _, h := range e.Hosts {
		if hostMatches(h, host) {
			return true
		}
	}
	return false
}

// Mask hides each real value in b behind a row of '*' as long as the value
// (an answer that echoes a request must not hand the secret back to the
// sandbox; the length is kept so that Content-Length stays true).
func (v *Vault) Mask(b []byte) []byte { return v.Masker().Mask(b) }

// MaskReader masks r's bytes as they stream (see Mask).
func (v *Vault) MaskReader(r io.Reader) io.Reader { return v.Masker().Reader(r) }

// A Masker hides the vault's values, and the encoded forms of them that
// the proxy made for one request (a Basic credential it re-encoded), so
// that an answer echoing the request hands none of them back.
type Masker struct{ hidden [][]byte }

// Masker is the vault's values in each of their forms, and extra.
func (v *Vault) Masker(extra ...[]byte) Masker {
	var m Masker
	if v != nil {
		for _, e := range v.entries {
			m.hidden = append(m.hidden, forms(e.Value)...)
		}
	}
	for _, x := range extra {
		if len(x) > 0 {
			m.hidden = append(m.hidden, x)
		}
	}
	return m
}

// Mask hides each of m's strings in b behind a row of '*' as long.
func (m Masker) Mask(b []byte) []byte {
	for _, h := range m.hidden {
		if bytes.Contains(b, h) {
			b = bytes.ReplaceAll(b, h, bytes.Repeat([]byte("*"), len(h)))
		}
	}
	return b
}

// MaskFold is Mask ignoring case: a header's name comes back in the case
// Go gives it (X-Ghp_abc for x-ghp_ABC).
func (m Masker) MaskFold(s string) string {
	for _, h := range m.hidden {
		lower, hl := strings.ToLower(s), strings.ToLower(string(h))
		for i := strings.Index(lower, hl); i >= 0 && len(hl) > 0; i = strings.Index(lower, hl) {
			s = s[:i] + strings.Repeat("*", len(hl)) + s[i+len(hl):]
			lower = strings.ToLower(s)
		}
	}
	return s
}

// Reader masks r's bytes as they stream.
func (m Masker) Reader(r io.Reader) io.Reader {
	hold := 0
	for _, h := range m.hidden {
		hold = max(hold, len(h)-1)
	}
	return &scanReader{r: r, hold: hold, fn: func(b []byte) ([]byte, error) { return m.Mask(b), nil }}
}

// GuardReader passes r's bytes on until a sentinel appears in them, and
// then fails with a *Refusal for host, the sentinel itself never passed
// on (nor any of its first bytes).
func (v *Vault) GuardReader(r io.Reader, host, where string) io.Reader {
	hold := len(sentinelPrefix) + 31
	return &scanReader{r: r, hold: hold, fn: func(b []byte) ([]byte, error) {
		if name, ok := v.HasSentinel(b); ok {
			return nil, &Refusal{Secret: name, Host: host, Where: where}
		}
		return b, nil
	}}
}

// scanReader runs fn over a stream, holding back the last hold bytes
// until more arrive, so that a match across two reads is still seen
// whole. fn must leave text it already returned unchanged when it sees
// it again.
type scanReader struct {
	r       io.Reader
	hold    int
	fn      func([]byte) ([]byte, error)
	pending []byte // read, transformed, not yet returned
	ready   int    // how much of pending may be returned
	err     error
}

func (s *scanReader) Read(p []byte) (int, error) {
	for s.ready == 0 {
		if s.err != nil {
			return 0, s.err
		}
		buf := make([]byte, 32*1024)
		n, err := s.r.Read(buf)
		s.pending = append(s.pending, buf[:n]...)
		out, ferr := s.fn(s.pending)
		if ferr != nil {
			s.pending, s.err = nil, ferr
			return 0, ferr
		}
		s.pending = out
		if err != nil {
			s.ready, s.err = len(s.pending), err
		} else {
			s.ready = max(0, len(s.pending)-s.hold)
		}
	}
	n := copy(p, s.pending[:s.ready])
	s.pending = s.pending[n:]
	s.ready -= n
	return n, nil
}
