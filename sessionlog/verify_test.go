package sessionlog

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVerifyFlipEveryByte changes every byte of every line in turn, with
// three different bit flips, and checks that Verify names the damaged line.
// On the last line, which no successor protects, it checks that what goes
// unnoticed is only what the package doc says can: a byte of the time or of
// free-form data whose change leaves them valid, or the final newline.
func TestVerifyFlipEveryByte(t *testing.T) {
	good := sampleLog(t)
	require.NoError(t, Verify(bytes.NewReader(good)))
	ls := lines(good)
	n := len(ls)

	// Where the last line's time and data values lie.
	last := ls[n-1]
	lastStart := len(good) - len(last) - 1
	timeStart := bytes.Index(last, []byte(litTime)) + len(litTime)
	timeEnd := bytes.Index(last, []byte(litSession))
	dataStart := bytes.Index(last, []byte(litData)) + len(litData)
	dataEnd := len(last) - prevSuffixLen

	undetected := 0
	off := 0
	for k, line := range ls {
		lineNo := k + 1
		for i := 0; i <= len(line); i++ { // i == len(line): the newline
			for _, mask := range []byte{0x01, 0x20, 0x80} {
				b := bytes.Clone(good)
				b[off+i] ^= mask
				err := Verify(bytes.NewReader(b))
				where := fmt.Sprintf("line %d byte %d mask %#x: %s", lineNo, i, mask, b[off:off+len(line)])
				if err == nil {
					require.Equal(t, n, lineNo, "undetected change before the last line: %s", where)
					inTime := lastStart+timeStart <= off+i && off+i < lastStart+timeEnd
					inData := lastStart+dataStart <= off+i && off+i < lastStart+dataEnd
					newline := i == len(line)
					require.True(t, inTime || inData || newline, "undetected change outside the time and data: %s", where)
					undetected++
					continue
				}
				var le *LineError
				require.ErrorAs(t, err, &le, where)
				assert.True(t, le.Line == lineNo || le.OrLine == lineNo, "%s: error names %v", where, err)
			}
		}
		off += len(line) + 1
	}
	t.Logf("%d of %d changes to the last line went unnoticed (time or free-form data)", undetected, 3*(len(last)+1))
}

// TestVerifyBlame pins which line a broken link is blamed on.
func TestVerifyBlame(t *testing.T) {
	lowerLineLimit(t)
	good := sampleLog(t)
	ls := lines(good)
	join := func(ls [][]byte) []byte { return append(bytes.Join(ls, []byte("\n")), '\n') }
	edit := func(f func(ls [][]byte) [][]byte) []byte {
		c := make([][]byte, len(ls))
		for i := range ls {
			c[i] = bytes.Clone(ls[i])
		}
		return join(f(c))
	}
	replace := func(line []byte, old, new string) []byte {
		require.Contains(t, string(line), old)
		return bytes.Replace(line, []byte(old), []byte(new), 1)
	}

	for _, c := range []struct {
		name         string
		log          []byte
		line, orLine int
		reason       string
	}{
		{"empty", nil, 1, 0, "no complete line"},
		{"only a fragment", []byte(`{"seq":1`), 1, 0, "no complete line"},
		{"content of line 2 changed", edit(func(ls [][]byte) [][]byte {
			ls[1] = replace(ls[1], "ls -l", "rm -r")
			return ls
		}), 2, 0, "prev recorded in line 3"},
		{"content of the line before the last changed", edit(func(ls [][]byte) [][]byte {
			ls[4] = replace(ls[4], "danger-full-access", "workspace-write")
			return ls
		}), 5, 6, "no complete line follows"},
		{"line 3 deleted", edit(func(ls [][]byte) [][]byte {
			return append(ls[:2:2], ls[3:]...)
		}), 3, 0, "seq is 4, want 3"},
		{"last line deleted is invisible", join(ls[:len(ls)-1]), 0, 0, ""},
		{"line duplicated", edit(func(ls [][]byte) [][]byte {
			return append(ls[:3:3], ls[2:]...)
		}), 4, 0, "seq is 3, want 4"},
		{"line 1 not session/start", edit(func(ls [][]byte) [][]byte {
			return ls[1:]
		}), 1, 0, "seq is 2, want 1"},
		{"whitespace added", edit(func(ls [][]byte) [][]byte {
			ls[2] = replace(ls[2], `{"target"`, `{ "target"`)
			return ls
		}), 3, 0, "not compact"},
		{"key order changed", edit(func(ls [][]byte) [][]byte {
			ls[1] = replace(ls[1], `{"seq":2,`, `{"seq" :2,`)
			return ls
		}), 2, 0, `{"seq":`},
		{"unknown type on the last line", edit(func(ls [][]byte) [][]byte {
			ls[5] = replace(ls[5], "tool/result", "tool/resulz")
			return ls
		}), 6, 0, "unknown event type"},
		{"unknown mode", edit(func(ls [][]byte) [][]byte {
			ls[4] = replace(ls[4], "danger-full-access", "danger-full-acces")
			return ls
		}), 5, 0, "unknown sandbox mode"},
		{"seq skipped on the last line", edit(func(ls [][]byte) [][]byte {
			ls[5] = replace(ls[5], `"seq":6`, `"seq":7`)
			return ls
		}), 6, 0, "seq is 7, want 6"},
		{"garbage newline-terminated last line", append(bytes.Clone(good), "garbage\n"...), 7, 0, "does not start with"},
		{"torn fragment is fine", append(bytes.Clone(good), "garbage"...), 0, 0, ""},
		{"line too long", append(bytes.Clone(good), strings.Repeat("x", maxLineBytes+1)...), 7, 0, "longer than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Verify(bytes.NewReader(c.log))
			if c.line == 0 {
				assert.NoError(t, err)
				return
			}
			var le *LineError
			require.ErrorAs(t, err, &le)
			assert.ErrorIs(t, err, ErrCorrupt)
			assert.Equal(t, c.line, le.Line, err.Error())
			assert.Equal(t, c.orLine, le.OrLine, err.Error())
			assert.Contains(t, le.Reason, c.reason)
		})
	}
}

func TestCheckReport(t *testing.T) {
	good := sampleLog(t)
	rep, err := Check(bytes.NewReader(append(bytes.Clone(good), `{"seq":7`...)))
	require.NoError(t, err)
	ls := lines(good)
	assert.Equal(t, Report{
		Session:   "sample",
		Events:    6,
		LastHash:  fmt.Sprintf("%x", hashLine(ls[len(ls)-1])),
		TornBytes: 8,
		TornLine:  7,
	}, rep)

	// On an error, Events counts the intact events before the bad line.
	b := bytes.Replace(bytes.Clone(good), []byte("ls -l"), []byte("rm -r"), 1)
	rep, err = Check(bytes.NewReader(b))
	assert.Error(t, err)
	assert.Equal(t, 1, rep.Events)
}
