package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// MaxTailCount is how much of a file, before the lines a tail read
// returns, read_file counts to number those lines from the start. A tail
// further into the file is numbered from its end (-1 is the last line):
// counting would mean reading the whole file, and a 10 GB log's last lines
// must cost what a small file's do.
const MaxTailCount = 256 << 10

// MaxTailScan is how far back from the end of a file a tail read looks
// for the start of its lines. Only a line longer than this stops it short:
// such a line (a file of one huge line, or a hole of NUL bytes) is not
// shown, and the lines after it are.
const MaxTailScan = 256 << 20

// readTail returns lines of a text file counted from its end: the n-th
// line from the end first, then up to limit-1 lines after it. It reads the
// file backwards in blocks from its end (the first size bytes, as stat saw
// them), then forwards from where those lines start: what it reads is
// bounded by the lines it returns and MaxTailCount (and MaxTailScan), not
// by the file's size.
func readTail(ctx context.Context, path string, file io.ReaderAt, bufs *readBuffer, size int64, n, limit int) (*Result, error) {
	start, lines, found, short, err := tailStart(ctx, file, size, n, MaxTailScan, bufs.chunk[:])
	if err != nil {
		return nil, err
	}
	switch {
	case lines == 0 && short:
		return &Result{Text: fmt.Sprintf("[%s: no lines: the last line is longer than %s, more than read_file reads back from the end; use bash (e.g. tail -c 2000) to see its end]\n",
			quotePath(path), formatSize(MaxTailScan))}, nil
	case lines == 0:
		return &Result{Text: fmt.Sprintf("[%s: empty file]\n", quotePath(path))}, nil
	}
	// The lines before start: counted when they are few enough, else
	// unknown, and the lines are numbered from the end.
	before, counted := 0, true
	if found {
		before, counted, err = countLines(ctx, file, start, bufs.chunk[:])
		if err != nil {
			return nil, err
		}
	}
	first := before + 1
	if !counted {
		first = -lines
	}
	bufs.r.Reset(io.NewSectionReader(file, start, size-start))
	defer bufs.r.Reset(nil) // the pool keeps no file
	lr := &lineReader{r: bufs.r, lines: first - 1}
	last := first - 1 + limit
	if last < first-1 {
		last = math.MaxInt
	}
	b := &bufs.lines
	cut, err := numberLines(ctx, lr, last, b)
	if err != nil {
		return nil, err
	}
	end := lr.lines
	more := lr.more()
	if lr.err != nil {
		return nil, lr.err
	}

	var notes []string
	if cut > 0 {
		notes = append(notes, cutNote(cut))
	}
	if counted {
		if more {
			notes = append(notes, fmt.Sprintf("[showing lines %d-%d of %d; call read_file with offset=%d to continue]", first, end, before+lines, end+1))
		}
		r := readRange{path: path, start: first, end: end, total: before + lines, counted: true, truncated: more || cut > 0}
		return numberedResult(r.header(), b, notes), nil
	}
	if more {
		notes = append(notes, fmt.Sprintf("[showing lines %d to %d counted from the end; call read_file with offset=%d to continue]", first, end, end+1))
	}
	if short {
		notes = append(notes, fmt.Sprintf("[the line before these is longer than %s, more than read_file reads back from the end: use bash (e.g. tail -c) to see it]",
			formatSize(MaxTailScan)))
	}
	notes = append(notes, fmt.Sprintf("[line numbers count from the end (-1 is the last line): the file is %s, and the lines before these were not counted; a more negative offset reads further back]",
		formatSize(size)))
	h := fmt.Sprintf("[%s: lines %d to %d counted from the end, of more than %d", quotePath(path), first, end, lines)
	if more || cut > 0 {
		h += ", truncated"
	}
	return numberedResult(h+"]", b, notes), nil
}

// tailStart finds where the last n lines of the file's first size bytes
// begin, reading backwards from the end in blocks of buf's size. lines is
// how many lines there are from start to the end: n, or fewer when the
// file has no more (then found is false, and start is 0), or when the
// line before them goes back further than budget bytes from the end (then
// short is true, and the lines are those after it).
func tailStart(ctx context.Context, r io.ReaderAt, size int64, n int, budget int64, buf []byte) (start int64, lines int, found, short bool, err error) {
	if size == 0 {
		return 0, 0, false, false, nil
	}
	newlines := 0    // newlines seen that start one of the lines
	earliest := size // where the earliest line found starts
	for end, final := size, true; end > 0; {
		if err := ctx.Err(); err != nil {
			return 0, 0, false, false, err
		}
		if size-end >= budget {
			return earliest, newlines, true, true, nil
		}
		lo := max(0, end-int64(len(buf)))
		b := buf[:end-lo]
		if _, err := r.ReadAt(b, lo); err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("the file shrank while it was read: %w", io.ErrUnexpectedEOF)
			}
			return 0, 0, false, false, err
		}
		if final {
			// A final newline ends the last line; it starts none.
			b = bytes.TrimSuffix(b, []byte{'\n'})
			final = false
		}
		for {
			i := bytes.LastIndexByte(b, '\n')
			if i < 0 {
				break
			}
			earliest = lo + int64(i) + 1
			if newlines++; newlines == n {
				return earliest, n, true, false, nil
			}
			b = b[:i]
		}
		end = lo
	}
	// The whole file is fewer than n lines: the newlines between them,
	// and one more.
	return 0, newlines + 1, false, false, nil
}

// countLines counts the lines in the file's first end bytes, which end
// with a newline, if there are at most MaxTailCount of them; counted says
// whether it did.
func countLines(ctx context.Context, r io.ReaderAt, end int64, buf []byte) (int, bool, error) {
	if end > MaxTailCount {
		return 0, false, nil
	}
	lines := 0
	for off := int64(0); off < end; {
		if err := ctx.Err(); err != nil {
			return 0, false, err
		}
		b := buf[:min(int64(len(buf)), end-off)]
		if _, err := r.ReadAt(b, off); err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("the file shrank while it was read: %w", io.ErrUnexpectedEOF)
			}
			return 0, false, err
		}
		lines += bytes.Count(b, []byte{'\n'})
		off += int64(len(b))
	}
	return lines, true, nil
}

// numberedResult is a read_file result: the header line, the numbered
// lines, the notes.
func numberedResult(header string, lines *bytes.Buffer, notes []string) *Result {
	var out strings.Builder
	out.Grow(len(header) + 1 + lines.Len() + 300)
	out.WriteString(header + "\n")
	out.Write(lines.Bytes())
	for _, n := range notes {
		out.WriteString(n + "\n")
	}
	// No structuredContent: the clients that show it instead of the text
	// would hand the model the file's lines JSON-escaped (SPEC §5).
	return &Result{Text: out.String()}
}
