package sessionlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// MaxLineBytes bounds one line, newline included. A writer refuses a larger
// event (callers truncate tool output before logging it) and a reader
// refuses a larger line instead of buffering without limit.
const MaxLineBytes = 16 << 20

// maxLineBytes is MaxLineBytes, lowered by tests that would otherwise
// marshal 16 MiB under the race detector.
var maxLineBytes = MaxLineBytes

// genesis is the prev of line 1: the hash of the empty string, as if an
// empty line preceded it.
var genesis = sha256.Sum256(nil)

// The fixed parts of a line, in order.
const (
	litSeq     = `{"seq":`
	litTime    = `,"time":"`
	litSession = `","session":"`
	litType    = `","type":"`
	litData    = `","data":`
	litPrev    = `,"prev":"`
	litEnd     = `"}`
	// prevSuffixLen is the length of `,"prev":"<64 hex>"}`, which ends
	// every line: its fixed length is what lets the parser find where the
	// free-form data object stops.
	prevSuffixLen = len(litPrev) + 2*sha256.Size + len(litEnd)
)

// encodeLine renders ev as a line, without the newline (but with room for
// it), chained to prev. The time, session and type are written raw: their
// character sets (checked on the way in) need no JSON escaping.
func encodeLine(ev Event, prev [sha256.Size]byte) []byte {
	ts := ev.Time.Format(time.RFC3339Nano)
	b := make([]byte, 0, 1+len(litSeq)+20+len(litTime)+len(ts)+len(litSession)+len(ev.Session)+
		len(litType)+len(ev.Type)+len(litData)+len(ev.Data)+prevSuffixLen)
	b = append(b, litSeq...)
	b = strconv.AppendUint(b, ev.Seq, 10)
	b = append(b, litTime...)
	b = append(b, ts...)
	b = append(b, litSession...)
	b = append(b, ev.Session...)
	b = append(b, litType...)
	b = append(b, ev.Type...)
	b = append(b, litData...)
	b = append(b, ev.Data...)
	b = append(b, litPrev...)
	b = hex.AppendEncode(b, prev[:])
	b = append(b, litEnd...)
	return b
}

// lineFault is what is wrong with one line on its own, before the chain is
// considered.
type lineFault struct {
	reason string
	// malformed is set when the bytes are not a line of this format at all:
	// the kind of garbage a crash can leave, which replay may treat as torn
	// when it is the last line. A well-formed line with wrong values is
	// never torn.
	malformed bool
}

func (f *lineFault) Error() string { return f.reason }

func malformed(format string, args ...any) *lineFault {
	return &lineFault{reason: fmt.Sprintf(format, args...), malformed: true}
}

func invalid(format string, args ...any) *lineFault {
	return &lineFault{reason: fmt.Sprintf(format, args...)}
}

// parseLine parses one line (without its newline) of exactly the shape
// encodeLine writes, and checks every value that can be checked without the
// rest of the log. It returns the event and the prev hash as bytes.
func parseLine(b []byte) (Event, [sha256.Size]byte, *lineFault) {
	var ev Event
	var prev [sha256.Size]byte
	p := b

	if !bytes.HasPrefix(p, []byte(litSeq)) {
		return ev, prev, malformed(`does not start with {"seq":`)
	}
	p = p[len(litSeq):]
	n := span(p, isDigit)
	if n == 0 || n > 1 && p[0] == '0' {
		return ev, prev, malformed("seq is not a number without leading zeros")
	}
	seq, err := strconv.ParseUint(string(p[:n]), 10, 64)
	if err != nil || seq == 0 {
		return ev, prev, malformed("seq %.24q is not a positive 64-bit number", p[:n])
	}
	p = p[n:]

	ts, p, ok := field(p, litTime, isTimeChar)
	if !ok {
		return ev, prev, malformed(`"time" is not where a line has it`)
	}
	session, p, ok := field(p, litSession, idChar)
	if !ok {
		return ev, prev, malformed(`"session" is not where a line has it`)
	}
	typ, p, ok := field(p, litType, isTypeChar)
	if !ok {
		return ev, prev, malformed(`"type" is not where a line has it`)
	}
	if !bytes.HasPrefix(p, []byte(litData)) {
		return ev, prev, malformed(`"data" is not where a line has it`)
	}
	p = p[len(litData):]

	if len(p) < prevSuffixLen {
		return ev, prev, malformed(`line does not end with ,"prev":"<64 hex digits>"}`)
	}
	data, suffix := p[:len(p)-prevSuffixLen], p[len(p)-prevSuffixLen:]
	hexPrev := suffix[len(litPrev) : len(suffix)-len(litEnd)]
	if !bytes.HasPrefix(suffix, []byte(litPrev)) || !bytes.HasSuffix(suffix, []byte(litEnd)) ||
		span(hexPrev, isLowerHex) != len(hexPrev) {
		return ev, prev, malformed(`line does not end with ,"prev":"<64 lowercase hex digits>"}`)
	}
	hex.Decode(prev[:], hexPrev) // cannot fail: checked above

	// Compact also validates: one scan of what may be a megabyte of output.
	var compact bytes.Buffer
	compact.Grow(len(data))
	if len(data) == 0 || data[0] != '{' || json.Compact(&compact, data) != nil {
		return ev, prev, malformed("data is not a JSON object")
	}
	if !bytes.Equal(compact.Bytes(), data) {
		return ev, prev, malformed("data is not compact JSON")
	}

	t, err := time.Parse(time.RFC3339Nano, string(ts))
	if err != nil {
		return ev, prev, invalid("time %q: %v", ts, err)
	}
	if t.Format(time.RFC3339Nano) != string(ts) {
		return ev, prev, invalid("time %q is not in the form a writer produces", ts)
	}
	if err := ValidateSessionID(string(session)); err != nil {
		return ev, prev, invalid("%v", err)
	}
	if !knownTypes[string(typ)] {
		return ev, prev, invalid("unknown event type %q", typ)
	}
	if err := checkData(string(typ), data); err != nil {
		return ev, prev, invalid("%v", err)
	}

	ev = Event{
		Seq:     seq,
		Time:    t,
		Session: string(session),
		Type:    string(typ),
		Data:    json.RawMessage(data),
		Prev:    string(hexPrev),
	}
	return ev, prev, nil
}

// field consumes lit, then a run of characters allowed by ok, and returns
// the run. The closing quote belongs to the next literal.
func field(p []byte, lit string, ok func(byte) bool) (val, rest []byte, found bool) {
	if !bytes.HasPrefix(p, []byte(lit)) {
		return nil, p, false
	}
	p = p[len(lit):]
	n := span(p, ok)
	if n == 0 {
		return nil, p, false
	}
	return p[:n], p[n:], true
}

// span returns the length of the prefix of p whose bytes satisfy ok.
func span(p []byte, ok func(byte) bool) int {
	for i, c := range p {
		if !ok(c) {
			return i
		}
	}
	return len(p)
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isLowerHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' }

// isTimeChar covers every character of an RFC 3339 time with an offset.
func isTimeChar(c byte) bool {
	return isDigit(c) || c == '-' || c == ':' || c == '.' || c == '+' || c == 'T' || c == 'Z'
}

// isTypeChar covers every character of the event types.
func isTypeChar(c byte) bool {
	return 'a' <= c && c <= 'z' || c == '/'
}

// hashLine is the value the next line's prev must hold.
func hashLine(line []byte) [sha256.Size]byte { return sha256.Sum256(line) }
