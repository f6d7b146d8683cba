package tools

import (
	"unicode/utf8"
)

// A background process's output is read in pieces, as it comes: each read
// takes what was written since the last one. It is sanitised exactly as a
// bash command's output is (the same OutputBuffer rules), kept up to a
// limit of unread characters — older output is dropped and counted — and
// waited on without polling: every write wakes the waiters.

type streamState struct {
	max     int    // unread characters kept at most
	unread  []byte // UTF-8
	chars   int    // characters in unread
	dropped int64  // characters dropped since the last take
	wake    chan struct{}
}

// NewStreamBuffer returns the output buffer of a background process, which
// keeps at most maxChars unread characters.
func NewStreamBuffer(maxChars int) *OutputBuffer {
	b := NewOutputBuffer(1)
	b.stream = &streamState{max: maxChars, wake: make(chan struct{})}
	return b
}

func (st *streamState) add(s []byte, chars int) {
	st.unread = append(st.unread, s...)
	st.chars += chars
	if over := st.chars - st.max; over > 0 {
		cut := 0
		for range over {
			_, size := utf8.DecodeRune(st.unread[cut:])
			cut += size
		}
		st.unread = append(st.unread[:0], st.unread[cut:]...)
		st.chars -= over
		st.dropped += int64(over)
	}
	close(st.wake)
	st.wake = make(chan struct{})
}

// Take returns the output written since the last Take, and how many
// characters were dropped meanwhile because nobody read them in time.
func (b *OutputBuffer) Take() (text string, dropped int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.stream
	text, dropped = string(st.unread), st.dropped
	st.unread, st.chars, st.dropped = st.unread[:0], 0, 0
	if cap(st.unread) > 64<<10 {
		st.unread = nil // do not keep a large buffer for a quiet process
	}
	return text, dropped
}

// Pending reports whether output is waiting to be taken.
func (b *OutputBuffer) Pending() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stream.chars > 0 || b.stream.dropped > 0
}

// Written returns a channel closed at the next write: wait on it, with the
// process's end and a timer, instead of polling.
func (b *OutputBuffer) Written() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stream.wake
}
