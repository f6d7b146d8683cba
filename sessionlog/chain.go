package sessionlog

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
)

// chain is the running state of a log's hash chain: all a reader needs to
// check the next line and all a writer needs to append after the last one.
// It is a value: a replay that fails leaves the caller's copy untouched.
type chain struct {
	// session is the id every line must name. Empty until line 1 when the
	// caller has no expectation (Verify of a bare stream).
	session string
	seq     uint64            // seq of the last accepted line; 0 before line 1
	prev    [sha256.Size]byte // hash of the last accepted line; genesis before line 1
	off     int64             // offset just past the last accepted line's newline
	lastOff int64             // offset where the last accepted line starts
}

func newChain(session string) chain {
	return chain{session: session, prev: genesis}
}

// accept moves the chain past line, which holds ev.
func (c *chain) accept(line []byte, ev Event) {
	c.seq = ev.Seq
	c.prev = hashLine(line)
	c.lastOff = c.off
	c.off += int64(len(line)) + 1
	if c.session == "" {
		c.session = ev.Session
	}
}

// tail describes bytes after the last complete line that replay left alone:
// the remains of an interrupted write.
type tail struct {
	line int   // the number the torn line would have had
	size int64 // its length, up to the end of the input
}

var errLineTooLong = errors.New("line too long")

// replay reads lines from r, which starts at c.off, checks each against the
// chain and passes the good ones to emit, in order. It stops at the end of r
// or at the first bad line, which it returns as a *LineError.
//
// A final fragment without a newline is torn: replay stops before it and
// describes it in the tail. When strict is false, so is a final
// newline-terminated line that is not a line of this format at all (garbage
// a power cut can leave on file systems that do not order data writes).
//
// emit sees a line only once the next line's prev has vouched for it, or
// at the end: when a mismatch is blamed on the line before, that line is
// never emitted, so callers get exactly the events before the first bad one.
func (c chain) replay(r io.Reader, strict bool, emit func(Event)) (chain, tail, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var pending Event
	hasPending := false
	flush := func() {
		if hasPending {
			emit(pending)
			hasPending = false
		}
	}
	defer flush()

	cur, complete, err := readLine(br)
	for {
		line := int(c.seq) + 1
		switch {
		case err == io.EOF:
			return c, tail{}, nil
		case errors.Is(err, errLineTooLong):
			return c, tail{}, &LineError{Line: line, Offset: c.off, Reason: fmt.Sprintf("longer than %d bytes", maxLineBytes)}
		case err != nil:
			return c, tail{}, fmt.Errorf("reading session log: %w", err)
		case !complete:
			// No newline at the end: an interrupted write.
			return c, tail{line: line, size: int64(len(cur))}, nil
		}

		ev, prev, fault := parseLine(cur)
		if fault != nil {
			if fault.malformed && !strict {
				next, nextComplete, nextErr := readLine(br)
				if nextErr == io.EOF || nextErr == nil && !nextComplete {
					// The last line is garbage: a lost write.
					return c, tail{line: line, size: int64(len(cur)) + 1 + int64(len(next))}, nil
				}
			}
			return c, tail{}, &LineError{Line: line, Offset: c.off, Reason: fault.reason}
		}
		// seq before prev: a line removed, repeated or moved shows as a seq
		// out of place, which says more than a broken link would.
		if ev.Seq != uint64(line) {
			return c, tail{}, &LineError{Line: line, Offset: c.off, Reason: fmt.Sprintf("seq is %d, want %d", ev.Seq, line)}
		}
		if prev != c.prev {
			if line == 1 {
				return c, tail{}, &LineError{Line: 1, Reason: "prev is not the hash of the empty string"}
			}
			err := c.blame(line, cur, br)
			if err.Line < line {
				hasPending = false // the line before is the damaged one
			}
			return c, tail{}, err
		}
		flush() // this line's prev vouched for the pending one

		if c.session != "" && ev.Session != c.session {
			return c, tail{}, &LineError{Line: line, Offset: c.off,
				Reason: fmt.Sprintf("names session %q, but the log is session %q", ev.Session, c.session)}
		}
		if line == 1 && ev.Type != EventSessionStart {
			return c, tail{}, &LineError{Line: 1, Reason: fmt.Sprintf("is %s, but a log starts with %s", ev.Type, EventSessionStart)}
		}
		if line > 1 && ev.Type == EventSessionStart {
			return c, tail{}, &LineError{Line: line, Offset: c.off, Reason: "a second " + EventSessionStart}
		}

		c.accept(cur, ev)
		pending, hasPending = ev, true
		cur, complete, err = readLine(br)
	}
}

// blame decides which line a broken link between line-1 and line (whose
// bytes are cur) is the fault of, by asking the next line whether it vouches
// for cur: if it does, cur is intact and the line before was altered; if it
// does not, cur was; if there is no next line, the chain cannot tell.
func (c chain) blame(line int, cur []byte, br *bufio.Reader) *LineError {
	next, complete, err := readLine(br)
	known := err == nil && complete
	var nextPrev [sha256.Size]byte
	if known {
		var fault *lineFault
		_, nextPrev, fault = parseLine(next)
		known = fault == nil
	}
	switch {
	case known && nextPrev == hashLine(cur):
		return &LineError{Line: line - 1, Offset: c.lastOff,
			Reason: fmt.Sprintf("altered: its hash does not match the prev recorded in line %d", line)}
	case known:
		return &LineError{Line: line, Offset: c.off,
			Reason: fmt.Sprintf("altered: its prev does not match the hash of line %d, and line %d's prev does not match it", line-1, line+1)}
	default:
		return &LineError{Line: line - 1, OrLine: line, Offset: c.lastOff,
			Reason: fmt.Sprintf("line %d's prev does not match the hash of line %d: one of them was altered, and no complete line follows line %d to tell which", line, line-1, line)}
	}
}

// readLine returns the next line without its newline, and whether it had
// one. It returns io.EOF only when no bytes are left. The line is a fresh
// slice: events keep pointing into it.
func readLine(br *bufio.Reader) ([]byte, bool, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > maxLineBytes {
			return nil, false, errLineTooLong
		}
		line = append(line, frag...)
		switch {
		case err == nil:
			return line[:len(line)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if len(line) == 0 {
				return nil, false, io.EOF
			}
			return line, false, nil
		default:
			return nil, false, err
		}
	}
}
