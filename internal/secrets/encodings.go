package secrets

import (
	"bytes"
	"encoding/json"
	"html"
	"net/url"
	"strings"
)

// A value travels in more forms than its own bytes: in a URL it goes
// percent-encoded, and a host that echoes a request may hand it back in
// any of the forms a URL, a form, an HTML page or a JSON string gives it.
// Each of them is masked as the value is, so that a '+' or a '/' in a
// token cannot turn its echo into text the masking misses.

// HeldIn reports whether text holds s's value in any of its forms.
func (s Secret) HeldIn(text string) bool {
	if len(s.Value) == 0 {
		return false
	}
	for _, f := range forms(s.Value) {
		if strings.Contains(text, string(f)) {
			return true
		}
	}
	return false
}

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

// forms are v and every other form a URL, a form, a page or a JSON
// string gives it: percent-encoded with either case of hex, query- and
// path-escaped as Go writes them, with each '+' read as a space (as a
// form decoder reads a bare one), HTML-escaped (as Go's html and
// html/template packages write text), and JSON-escaped (as Go writes a
// string, and with '/' as "\/", as PHP does).
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
	add([]byte(html.EscapeString(string(v))))
	add([]byte(htmlTemplateText.Replace(string(v))))
	if j, err := json.Marshal(string(v)); err == nil {
		j = j[1 : len(j)-1] // the quotes
		add(j)
		add(bytes.ReplaceAll(j, []byte("/"), []byte(`\/`)))
	}
	return all
}

// htmlTemplateText is how html/template writes text in an HTML element.
var htmlTemplateText = strings.NewReplacer("\x00", "\uFFFD", `"`, "&#34;", "&", "&amp;", "'", "&#39;", "+", "&#43;", "<", "&lt;", ">", "&gt;")
