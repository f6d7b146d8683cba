package tools

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// outputLineSnap is how far (in characters) a cut may move to land on a
// line boundary. A model reads lines; half a line at the edge of the cut is
// noise, but giving up more than a couple of hundred characters of real
// output to avoid it is not worth it.
const outputLineSnap = 200

// outputCutLine is the line that stands in for the middle of a capped
// output. It names the unit (characters, i.e. Unicode code points) so the
// model knows how much it did not see.
const outputCutLine = "[output truncated: %d %s cut from the middle]"

// OutputBuffer collects the combined stdout and stderr of a bash command
// and turns the terminal byte stream into text a model can read (SPEC §5):
//
//   - ANSI escape sequences are removed: CSI (ESC [ … final byte 0x40–0x7E),
//     OSC (ESC ] … BEL or ESC \), DCS/SOS/PM/APC strings (ESC P, X, ^, _ …
//     ESC \), two-byte escapes (ESC followed by 0x30–0x7E) and escapes with
//     intermediates such as the charset selection ESC ( B. The UTF-8
//     encoded C1 introducers U+009B (CSI), U+009D (OSC) and U+0090, U+0098,
//     U+009E, U+009F (strings) are honoured too.
//   - CRLF and a lone CR become LF, so a progress bar redrawn with CR
//     turns into one line per redraw.
//   - BEL and every other C0 or C1 control character is dropped, except
//     tab and newline.
//   - Invalid UTF-8 becomes U+FFFD, one per invalid byte (as ranging over
//     a Go string does), and a multi-byte character split across writes is
//     reassembled, not replaced. A raw 0x9B byte is invalid UTF-8, not a
//     CSI: commands print UTF-8 today.
//
// Every rule works across Write boundaries: the output of any split of the
// same bytes into writes is identical.
//
// At most maxChars characters are kept whatever the volume written: the
// first half, and a ring holding the last half. Memory is therefore
// bounded by about 4 × maxChars bytes, so a command printing gigabytes
// cannot make the server hold them.
//
// Unlike a real terminal, an OSC sequence also ends at a newline. OSC
// payloads (titles, hyperlinks) never contain one, and without this a
// stray or truncated "ESC ]" would swallow everything after it, which
// matters more to an agent than fidelity to xterm.
//
// An OutputBuffer is safe for concurrent use. The bash tool passes the
// same buffer as cmd.Stdout and cmd.Stderr: os/exec then hands both to the
// child as one pipe, so the kernel keeps their relative order; the mutex
// makes sure that a caller copying two pipes cannot corrupt the state.
type OutputBuffer struct {
	mu sync.Mutex

	headCap, tailCap int    // in characters
	head             []byte // the first headCap characters, UTF-8
	headChars        int
	// ring holds the last bytes sent past the head: enough for tailCap+1
	// characters, so the tail and the character just before it can be
	// decoded from it. Counting characters in bulk and decoding only in
	// String keeps Write at the speed of copy.
	ring      []byte
	ringSize  int   // len(ring) once it has wrapped
	ringPos   int   // where the next byte goes, once it has wrapped
	tailChars int64 // characters ever sent past the head
	afterHead rune  // the first character sent past the head, or -1
	total     int64 // bytes written

	// stream, when set, makes this the buffer of a background process:
	// sanitised text goes there, to be taken as it comes (stream.go),
	// instead of into head and tail.
	stream *streamState

	// Sanitiser state carried from one Write to the next.
	state     outputState
	pendingCR bool              // the last line break came from a CR, so an LF right after it is the same break
	partial   [utf8.UTFMax]byte // the start of a multi-byte character cut by a Write boundary
	npartial  int               // bytes used in partial
}

// outputState is where the sanitiser is inside an escape sequence.
type outputState uint8

const (
	outGround   outputState = iota // plain text
	outEsc                         // after ESC
	outEscInter                    // after ESC and intermediate bytes (0x20–0x2F), e.g. ESC (
	outCSI                         // inside a control sequence: ESC [ or U+009B
	outOSC                         // inside an operating system command: ESC ] or U+009D
	outString                      // inside a DCS, SOS, PM or APC string
)

// Control bytes the sanitiser treats specially.
const (
	outBEL = 0x07
	outCAN = 0x18 // cancels an escape sequence
	outSUB = 0x1a // cancels an escape sequence
	outESC = 0x1b
	outDEL = 0x7f
)

// NewOutputBuffer returns a buffer that keeps at most maxChars characters
// of output (DefaultMaxOutput when maxChars <= 0).
func NewOutputBuffer(maxChars int) *OutputBuffer {
	if maxChars <= 0 {
		maxChars = DefaultMaxOutput
	}
	headCap := maxChars / 2
	tailCap := maxChars - headCap
	return &OutputBuffer{
		headCap:   headCap,
		tailCap:   tailCap,
		ringSize:  utf8.UTFMax * (tailCap + 1),
		afterHead: -1,
	}
}

// Write sanitises p and keeps what fits. It never fails and always reports
// len(p) written: a short write would make os/exec stop copying the
// child's output, and the child would then block or die on a broken pipe.
func (b *OutputBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += int64(len(p))
	b.feed(p)
	return len(p), nil
}

// Close marks the end of the stream: a multi-byte character still waiting
// for its last bytes will never be completed, so each of its bytes becomes
// U+FFFD, and an unfinished escape sequence is dropped. Call it once the
// command has exited and before String. It always returns nil.
func (b *OutputBuffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for range b.npartial {
		b.emitRune(utf8.RuneError)
	}
	b.npartial = 0
	b.state = outGround
	b.pendingCR = false
	return nil
}

// Total returns the number of bytes written, before sanitising and
// capping.
func (b *OutputBuffer) Total() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// String returns the sanitised output. When more than maxChars characters
// were written, truncated is true and text is the head, a line
//
//	[output truncated: N characters cut from the middle]
//
// and the tail, where N (also returned as cutChars) counts every character
// not shown ("1 character" when N is 1). The head ends and the tail starts
// at a line boundary when one is within 200 characters of the cut, so no
// line is shown half; otherwise the cut falls between characters. The cut
// line always stands on a line of its own, and the result never exceeds
// maxChars characters plus that line and its two newlines.
//
// String does not include a multi-byte character whose last bytes have not
// arrived yet; see Close. It is not a fmt.Stringer: it also reports the
// truncation, which the bash tool puts in its structured result.
func (b *OutputBuffer) String() (text string, truncated bool, cutChars int) {
	b.mu.Lock()
	defer b.mu.Unlock()

	// The ring in order, oldest byte first; before it wraps, ring is
	// exactly the bytes sent past the head.
	ring := b.ring
	if len(ring) == b.ringSize && b.ringPos > 0 {
		ring = make([]byte, 0, b.ringSize)
		ring = append(ring, b.ring[b.ringPos:]...)
		ring = append(ring, b.ring[:b.ringPos]...)
	}
	if b.tailChars <= int64(b.tailCap) {
		return string(b.head) + string(ring), false, 0
	}

	// The tail is the last tailCap characters of the ring; its oldest
	// bytes may be the end of a character whose start was overwritten,
	// but the ring is big enough for one more character than needed.
	t := len(ring)
	for range b.tailCap {
		_, size := utf8.DecodeLastRune(ring[:t])
		t -= size
	}
	beforeTail, _ := utf8.DecodeLastRune(ring[:t])
	tail := ring[t:]
	cut := b.tailChars - int64(b.tailCap)

	// Snap the head back to just after its last newline, unless the cut
	// already falls at the end of a line.
	head := b.head
	if b.afterHead != '\n' {
		if i, chars := outputLastNewline(head); i >= 0 {
			head = head[:i+1]
			cut += int64(chars)
		}
	}
	// Snap the tail forward to just after its first newline, unless the
	// cut already falls at the start of a line.
	if beforeTail != '\n' {
		if i, chars := outputFirstNewline(tail); i >= 0 {
			tail = tail[i+1:]
			cut += int64(chars)
		}
	}

	var sb strings.Builder
	sb.Grow(len(head) + len(tail) + len(outputCutLine) + 24)
	sb.Write(head)
	if len(head) > 0 && head[len(head)-1] != '\n' {
		sb.WriteByte('\n')
	}
	unit := "characters"
	if cut == 1 {
		unit = "character"
	}
	fmt.Fprintf(&sb, outputCutLine, cut, unit)
	sb.WriteByte('\n')
	sb.Write(tail)
	return sb.String(), true, int(cut)
}

// outputLastNewline finds the last '\n' among the last outputLineSnap
// characters of s and how many characters follow it; i is -1 if there is
// none. A '\n' byte is never part of a multi-byte character, so a byte
// search is safe.
func outputLastNewline(s []byte) (i, chars int) {
	for i = len(s) - 1; i >= 0 && chars < outputLineSnap; i-- {
		if s[i] == '\n' {
			return i, chars
		}
		if utf8.RuneStart(s[i]) {
			chars++
		}
	}
	return -1, 0
}

// outputFirstNewline finds the first '\n' among the first outputLineSnap
// characters of s and how many characters it ends (itself included); i is
// -1 if there is none.
func outputFirstNewline(s []byte) (i, chars int) {
	for i = 0; i < len(s) && chars < outputLineSnap; i++ {
		if utf8.RuneStart(s[i]) {
			chars++
		}
		if s[i] == '\n' {
			return i, chars
		}
	}
	return -1, 0
}

// feed runs p through the sanitiser. The caller holds b.mu.
func (b *OutputBuffer) feed(p []byte) {
	for i := 0; i < len(p); {
		c := p[i]

		// Complete a multi-byte character begun in an earlier Write.
		if b.npartial > 0 {
			b.partial[b.npartial] = c
			b.npartial++
			i++
			if !utf8.FullRune(b.partial[:b.npartial]) {
				continue
			}
			r, size := utf8.DecodeRune(b.partial[:b.npartial])
			// An invalid sequence consumes one byte; the bytes after it
			// (at most three) start afresh and may be ESC, CR, another
			// lead byte…
			var rest [utf8.UTFMax]byte
			nrest := copy(rest[:], b.partial[size:b.npartial])
			b.npartial = 0
			b.char(r)
			b.feed(rest[:nrest])
			continue
		}

		switch b.state {
		case outGround:
			if n := b.text(p[i:]); n > 0 {
				i += n
				continue
			}
			// c is not plain text.
			switch {
			case c < 0x80:
				b.control(c)
				i++
			case utf8.FullRune(p[i:]):
				r, size := utf8.DecodeRune(p[i:])
				b.char(r)
				i += size
			default:
				// A valid start of a character that continues in the
				// next Write.
				b.npartial = copy(b.partial[:], p[i:])
				i = len(p)
			}

		case outEsc:
			switch {
			case c == '[':
				b.state = outCSI
			case c == ']':
				b.state = outOSC
			case c == 'P' || c == 'X' || c == '^' || c == '_':
				b.state = outString
			case c >= 0x20 && c <= 0x2f:
				b.state = outEscInter
			case c >= 0x30 && c <= 0x7e:
				// A complete two-byte escape, ESC \ (string terminator)
				// included.
				b.state = outGround
			case c == outESC:
				// ESC ESC: the first one is abandoned.
			case c == outCAN || c == outSUB:
				b.state = outGround
			default:
				// Not an escape after all: drop the ESC, keep the byte.
				b.state = outGround
				continue
			}
			i++

		case outEscInter, outCSI:
			// An escape's intermediate bytes, or a control sequence's
			// parameter and intermediate bytes, up to the final byte.
			csi := b.state == outCSI
			last := byte(0x2f)
			if csi {
				last = 0x3f
			}
			switch {
			case c >= 0x20 && c <= last:
			case c > last && c <= 0x7e:
				b.state = outGround
			case c == outESC:
				b.state = outEsc
			case c == outCAN || c == outSUB:
				b.state = outGround
			case csi && c < 0x20:
				// A terminal executes C0 controls met inside a control
				// sequence (a newline still breaks the line).
				b.control(c)
			case csi && c == outDEL:
			default:
				// A byte that cannot be part of the sequence is text it
				// must not swallow.
				b.state = outGround
				continue
			}
			i++

		case outOSC, outString:
			switch {
			case c == outBEL || c == outCAN || c == outSUB:
				b.state = outGround
			case c == outESC:
				// ESC \ ends the string; ESC and anything else starts a
				// new escape, as in a terminal.
				b.state = outEsc
			case c == '\n' && b.state == outOSC:
				// See the type's doc: a newline ends a runaway OSC.
				b.state = outGround
				continue
			}
			i++
		}
	}
}

// text keeps the longest prefix of p that passes through unchanged
// (printable ASCII, tab, newline and valid UTF-8 characters other than C1
// controls) and returns its length in bytes. Taking whole runs lets the
// common case be a few copies rather than a call per character.
func (b *OutputBuffer) text(p []byte) int {
	i, chars := 0, 0
	for i < len(p) {
		c := p[i]
		switch {
		case c >= 0x20 && c < outDEL, c == '\t':
			i++
		case c == '\n':
			if i == 0 && b.pendingCR {
				// The LF of a CRLF: for control to swallow.
				return 0
			}
			i++
		case c < utf8.RuneSelf:
			b.keep(p[:i], chars)
			return i
		default:
			if !utf8.FullRune(p[i:]) {
				b.keep(p[:i], chars)
				return i
			}
			r, size := utf8.DecodeRune(p[i:])
			if (r == utf8.RuneError && size == 1) || (r >= 0x80 && r <= 0x9f) {
				b.keep(p[:i], chars)
				return i
			}
			i += size
		}
		chars++
	}
	b.keep(p, chars)
	return i
}

// keep stores s, chars characters of sanitised text.
func (b *OutputBuffer) keep(s []byte, chars int) {
	if chars == 0 {
		return
	}
	b.pendingCR = false
	if b.stream != nil {
		b.stream.add(s, chars)
		return
	}
	if room := b.headCap - b.headChars; room > 0 {
		n := len(s)
		if chars > room {
			// Only the first room characters fit in the head.
			n = 0
			for range room {
				_, size := utf8.DecodeRune(s[n:])
				n += size
			}
		}
		b.head = outputAppend(b.head, s[:n], utf8.UTFMax*b.headCap)
		taken := min(chars, room)
		b.headChars += taken
		s, chars = s[n:], chars-taken
		if chars == 0 {
			return
		}
	}
	if b.afterHead < 0 {
		b.afterHead, _ = utf8.DecodeRune(s)
	}
	b.tailChars += int64(chars)

	// Fill the ring, then wrap around it.
	if len(b.ring) < b.ringSize {
		n := min(b.ringSize-len(b.ring), len(s))
		b.ring = outputAppend(b.ring, s[:n], b.ringSize)
		s = s[n:]
	}
	if len(s) >= b.ringSize {
		copy(b.ring, s[len(s)-b.ringSize:])
		b.ringPos = 0
		return
	}
	n := copy(b.ring[b.ringPos:], s)
	copy(b.ring, s[n:])
	b.ringPos = (b.ringPos + len(s)) % b.ringSize
}

// outputAppend appends s to buf, never growing buf's capacity past limit
// (append alone may double it).
func outputAppend(buf, s []byte, limit int) []byte {
	if len(buf)+len(s) > cap(buf) {
		grown := make([]byte, len(buf), min(limit, max(2*cap(buf), len(buf)+len(s), 512)))
		copy(grown, buf)
		buf = grown
	}
	return append(buf, s...)
}

// control handles a C0 control byte or DEL outside a string.
func (b *OutputBuffer) control(c byte) {
	switch c {
	case '\n':
		if b.pendingCR {
			// The LF of a CRLF: the CR already broke the line.
			b.pendingCR = false
			return
		}
		b.emitRune('\n')
	case '\r':
		b.emitRune('\n')
		b.pendingCR = true
	case '\t':
		b.emitRune('\t')
	case outESC:
		b.state = outEsc
	}
	// Everything else (BEL, backspace, DEL, …) is dropped. It does not
	// clear pendingCR: an invisible byte between CR and LF must not turn
	// one line break into two, just as an escape sequence must not.
}

// char handles one decoded non-ASCII character (U+FFFD for an invalid
// byte).
func (b *OutputBuffer) char(r rune) {
	switch {
	case r == 0x9b:
		b.state = outCSI
	case r == 0x9d:
		b.state = outOSC
	case r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f:
		b.state = outString
	case r >= 0x80 && r <= 0x9f:
		// Other C1 controls are invisible; drop them.
	default:
		b.emitRune(r)
	}
}

// emitRune keeps one character.
func (b *OutputBuffer) emitRune(r rune) {
	var buf [utf8.UTFMax]byte
	b.keep(utf8.AppendRune(buf[:0], r), 1)
}

// LastLine is the last line of output with anything in it, cut to
// lastLineChars: what a progress notification shows of a long command.
func (b *OutputBuffer) LastLine() string {
	text, _, _ := b.String()
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if line := strings.TrimSpace(lines[i]); line != "" {
			if r := []rune(line); len(r) > lastLineChars {
				line = string(r[:lastLineChars]) + "…"
			}
			return line
		}
	}
	return ""
}

// lastLineChars bounds the line a progress notification carries.
const lastLineChars = 200
