package sessionlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxSummaryRunes keeps one event on one terminal-ish line; `cordon log
// --json` shows everything.
const maxSummaryRunes = 160

// Format writes events for humans (`cordon log`), one line each: the UTC
// time to the millisecond, seq, type and a summary of the data as key=value
// pairs in the data's own order. Data comes from the model and from
// commands' output, so every character that is not printable (escape
// sequences, bidirectional overrides, invalid UTF-8) is written as an escape
// and never reaches the terminal raw.
func Format(w io.Writer, events []Event) error {
	bw := bufio.NewWriter(w)
	for _, e := range events {
		line := fmt.Sprintf("%s %4d %-16s %s", e.Time.UTC().Format("2006-01-02T15:04:05.000Z"), e.Seq, e.Type, eventSummary(e))
		bw.WriteString(strings.TrimRight(line, " "))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// eventSummary is the one-line summary of an event's data; a mode change
// reads as what it is, "read-only (user)".
func eventSummary(e Event) string {
	s := pairs(e.Data)
	if m, err := e.ModeData(); err == nil {
		s = m.Mode + " (" + m.Source + ")"
	}
	return clip(sanitize(s), maxSummaryRunes)
}

// pairs renders a JSON object as key=value pairs in document order:
// strings bare when that is unambiguous and quoted otherwise, other values
// as compact JSON. Anything that is not an object is shown as it is.
func pairs(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return string(data)
	}
	var parts []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return string(data)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return string(data)
		}
		parts = append(parts, key+"="+value(v))
	}
	return strings.Join(parts, " ")
}

func value(v json.RawMessage) string {
	var s string
	if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
		if s == "" || strings.ContainsFunc(s, func(r rune) bool {
			return r == ' ' || r == '"' || r == '=' || r == '\\' || !unicode.IsPrint(r)
		}) {
			return strconv.Quote(s)
		}
		return s
	}
	return string(v)
}

// sanitize escapes every rune that is not printable, and every byte that is
// not UTF-8, so that what is shown cannot drive the terminal.
func sanitize(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == ' ' || unicode.IsPrint(r):
			b.WriteString(s[i : i+size])
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += size
	}
	return b.String()
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}
