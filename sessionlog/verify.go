package sessionlog

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrCorrupt matches (with errors.Is) every *LineError: the log is not what
// its writers wrote.
var ErrCorrupt = errors.New("session log is corrupt")

// LineError names the first bad line of a log and what is wrong with it.
type LineError struct {
	// Line is the 1-based number of the first line found bad.
	Line int
	// OrLine, when not zero, is the line after Line: the damage is in one of
	// the two and the chain cannot tell which (see the package doc).
	OrLine int
	// Offset is the byte offset where Line starts.
	Offset int64
	// Reason says what is wrong.
	Reason string
}

// Error names the line (or the two lines) and the reason.
func (e *LineError) Error() string {
	if e.OrLine != 0 {
		return fmt.Sprintf("sessionlog: line %d or %d: %s", e.Line, e.OrLine, e.Reason)
	}
	return fmt.Sprintf("sessionlog: line %d: %s", e.Line, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *LineError) Is(target error) bool { return target == ErrCorrupt }

// Report is what Check learned from a log it read to the end.
type Report struct {
	// Session is the id the log's lines name.
	Session string
	// Events is the number of complete lines that passed every check.
	Events int
	// LastHash is the hex SHA-256 of the last complete line: what the next
	// line's prev will hold. Recorded elsewhere, it anchors the tail, which
	// the chain itself cannot protect.
	LastHash string
	// TornBytes is the length of a final fragment without a newline, left by
	// an interrupted write and ignored; 0 when there is none.
	TornBytes int64
	// TornLine is the line number that fragment would have had.
	TornLine int
}

// Check reads a whole log from r and checks every line: its exact shape, its
// values (time, session id, known type, sandbox/mode schema), that seq counts
// 1, 2, 3…, that every line names the session of line 1, that line 1 and only
// line 1 is session/start, and that every prev is the hash of the line before.
// The first bad line is returned as a *LineError; the report then counts the
// events before it. A final fragment without a newline is not an error (see
// Report.TornBytes); a final newline-terminated line that does not parse is.
func Check(r io.Reader) (Report, error) {
	var rep Report
	c, t, err := newChain("").replay(r, true, func(Event) { rep.Events++ })
	rep.Session = c.session
	if err != nil {
		return rep, err
	}
	if c.seq == 0 {
		return rep, &LineError{Line: 1, Reason: "no complete line: a log starts with " + EventSessionStart}
	}
	rep.LastHash = hex.EncodeToString(c.prev[:])
	rep.TornBytes, rep.TornLine = t.size, t.line
	return rep, nil
}

// Verify is Check without the report, for `cordon log --verify`.
func Verify(r io.Reader) error {
	_, err := Check(r)
	return err
}

// VerifyFile verifies the log at path.
func VerifyFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sessionlog: %w", err)
	}
	defer f.Close()
	if err := Verify(f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
