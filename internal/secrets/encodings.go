package secrets

import (
	"bytes"
	"net/url"
)

// A value travels in more forms than its own bytes: in a URL it goes
// percent-encoded, and a host that echoes a request may hand back any of
// the forms a URL or a form gives it. Each of them is masked as the value
// is, so that a '+' or a '/' in a token cannot turn its echo into text
// the masking misses.

// urlEncoded is v with every byte outside RFC 3986's unreserved set
// percent-encoded: a host decodes it to v itself in a path and in a query
// alike (where a bare '+' would be a space).
func urlEncoded(v []byte, hex string) []byte {
	out := make([]byte, 0, len(v)*3)
	for _, c := range v {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			out = append(out, c)
			continue
		}
		out = append(out, '%', hex[c>>4], hex[c&15])
	}
	return out
}

const upperHex, lowerHex = "0123456789ABCDEF", "0123456789abcdef"

// forms are v and every other form a URL or a form gives it: percent-
// encoded with either case of hex, query- and path-escaped as Go writes
// them, and with each '+' read as a space, as a form decoder reads a bare
// one.
func forms(v []byte) [][]byte {
	all := [][]byte{v}
	add := func(f []byte) {
		for _, seen := range all {
			if bytes.Equal(seen, f) {
				return
			}
		}
		all = append(all, f)
	}
	add(urlEncoded(v, upperHex))
	add(urlEncoded(v, lowerHex))
	add([]byte(url.QueryEscape(string(v))))
	add([]byte(url.PathEscape(string(v))))
	add(bytes.ReplaceAll(v, []byte("+"), []byte(" ")))
	return all
}
