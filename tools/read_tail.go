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

// readTail returns lines of a text file counted from its end: the n-th
// line from the end first, then up to limit-1 lines after it. It reads the
// file backwards in blocks from its end (the first size bytes, as stat saw
// them), then forwards from where those lines start: what it reads is
// bounded by the lines it returns and MaxTailCount, not by the file's size.
func readTail(ctx context.Context, path string, file io.ReaderAt, bufs *readBuffer, size int64, n, limit int) (*Result, error) {
	start, lines, found, err := tailStart(ctx, file, size, n, bufs.chunk[:])
	if err != nil {
		return nil, err
	}
	if lines == 0 {
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
	var b bytes.Buffer
	cut, err := numberLines(ctx, lr, last, &b)
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
		return numberedResult(r.header(), &b, notes), nil
	}
	if more {
		notes = append(notes, fmt.Sprintf("[showing lines %d to %d counted from the end; call read_file with offset=%d to continue]", first, end, end+1))
	}
	notes = append(notes, fmt.Sprintf("[line numbers count from the end (-1 is the last line): the file is %s, and the lines before these were not counted; a more negative offset reads further back]",
		formatSize(size)))
	h := fmt.Sprintf("[%s: lines %d to %d counted from the end, of more than %d", quotePath(path), first, end, lines)
	if more || cut > 0 {
		h += ", truncated"
	}
	return numberedResult(h+"]", &b, notes), nil
}

// tailStart finds where the last n lines of the file's first size bytes
// begin, reading backwards from the end in blocks of buf's size. lines is
// how many lines there are from start to the end: n, or fewer when the
// file has no more (then found is false, and start is 0).
func tailStart(ctx context.Context, r io.ReaderAt, size int64, n int, buf []byte) (start int64, lines int, found bool, err error) {
	if size == 0 {
		return 0, 0, false, nil
	}
	newlines := 0 // newlines seen that start one of the lines
	for end, final := size, true; end > 0; {
		if err := ctx.Err(); err != nil {
			return 0, 0, false, err
		}
		lo := max(0, end-int64(len(buf)))
		b := buf[:end-lo]
		if _, err := r.ReadAt(b, lo); err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("the file shrank while it was read: %w", io.ErrUnexpectedEOF)
			}
			return 0, 0, false, err
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
			if newlines++; newlines == n {
				return lo + int64(i) + 1, n, true, nil
			}
			b = b[:i]
		}
		end = lo
	}
	// The whole file is fewer than n lines: the newlines between them,
	// and one more.
	return 0, newlines + 1, false, nil
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
