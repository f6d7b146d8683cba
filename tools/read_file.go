package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/cordonhq/cordon/fsfence"
	"github.com/cordonhq/cordon/sandbox"
)

// ReadFileInput are the read_file tool's arguments.
// It has no output type: its result is text only (see ReadFile).
type ReadFileInput struct {
	Path   string `json:"path" jsonschema:"File to read."`
	Offset int    `json:"offset,omitempty" jsonschema:"First line to return, 1-based. Default 1. Negative: that many lines from the end (-20 reads the last 20 lines), without reading the rest of the file." schema:"minimum=-MaxInt32,maximum=MaxInt32"`
	Limit  int    `json:"limit,omitempty" jsonschema:"How many lines to return. Default 2000." schema:"minimum=1,maximum=MaxInt32"`
}

// Limits of read_file.
const (
	// DefaultReadLimit is how many lines read_file returns when the call
	// does not say.
	DefaultReadLimit = 2000
	// MaxLineChars is where read_file cuts a long line (minified code, logs).
	MaxLineChars = 2000
	// MaxImageSize is the largest image read_file returns as image content.
	MaxImageSize = 10 << 20
	// MaxReadText bounds the text of one read_file result, whatever the
	// limit: the rest is one more call away.
	MaxReadText = 8 << 20
	// MaxLineCount is how much of a file read_file scans to count its
	// lines after the requested range: beyond it, the header says "of more
	// than N", so that reading the head of a huge log stays cheap.
	MaxLineCount = 256 << 20
)

// sniffSize is how much of a file decides text, image or binary.
const sniffSize = 8 << 10

// readChunk is the buffer of the reader and of the line counter: memory
// stays bounded by it, whatever the size of the file.
const readChunk = 64 << 10

// ReadFile returns lines offset..offset+limit-1 of a text file, numbered
// like `cat -n` below a header line (path, range, total lines, whether it
// was truncated), or an image as image content; a negative offset counts
// from the end (readTail). The result is text only, verbatim: no
// structuredContent, which some clients would show the model instead,
// JSON-escaped. It streams the file: memory is bounded by what it returns,
// not by the file's size.
func (tb *Toolbox) ReadFile(ctx context.Context, call Call, in ReadFileInput) (*Result, *ToolError) {
	call = tb.pin(call)
	if in.Limit < 0 {
		return nil, invalid("limit must be positive: it is a number of lines (default %d)", DefaultReadLimit)
	}
	offset, limit := in.Offset, in.Limit
	if offset == 0 {
		offset = 1
	}
	if limit == 0 {
		limit = DefaultReadLimit
	}
	pol, path, f, terr := tb.reading(call, in.Path, false)
	if terr != nil {
		return nil, terr
	}
	file, info, err := f.OpenFileInfo(path)
	if err != nil {
		if errors.Is(err, fsfence.ErrNotRegular) {
			if fi, serr := f.Stat(path); serr == nil && fi.IsDir() {
				return nil, invalid("%s is a directory: use list_directory to see its entries", path)
			}
		}
		return nil, fenceError(NameReadFile, pol, path, err)
	}
	defer file.Close()
	bufs := readBuffers.Get().(*readBuffer)
	defer bufs.release()
	head := bufs.head[:]
	n, err := readHead(file, head, info.Size())
	if err != nil {
		return nil, fenceError(NameReadFile, pol, path, err)
	}
	head = head[:n]
	// A file that ended within head is all there: its size is n, and
	// there is nothing more to read (a read fewer for most files a model
	// reads).
	size, rest := int64(n), io.Reader(file)
	if n == len(bufs.head) {
		size = info.Size()
	} else {
		rest = bytes.NewReader(nil)
	}
	if mime := imageType(head); mime != "" {
		return readImage(pol, path, mime, size, io.MultiReader(bytes.NewReader(head), rest))
	}
	if why := binaryReason(head, n == sniffSize); why != "" {
		return nil, errorf(CodeBinaryFile,
			"%s is a binary file (%s; %s, detected type %s): read_file shows UTF-8 text and png/jpeg/gif/webp images only; inspect it with bash (e.g. `file`, `xxd | head`, `iconv`)",
			path, formatSize(size), why, http.DetectContentType(head))
	}
	var res *Result
	if offset < 0 {
		fromEnd := -offset
		if fromEnd < 0 {
			fromEnd = math.MaxInt // -math.MinInt
		}
		res, err = readTail(ctx, path, file, bufs, size, fromEnd, limit)
	} else {
		bufs.r.Reset(io.MultiReader(bytes.NewReader(head), rest))
		defer bufs.r.Reset(nil) // the pool keeps no file
		res, err = readLines(ctx, path, &lineReader{r: bufs.r, chunk: bufs.chunk[:]}, &bufs.lines, size, offset, limit, call.budget())
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, errorf(CodeTimeout, "read_file %s was cancelled", path)
		}
		return nil, fenceError(NameReadFile, pol, path, err)
	}
	return res, nil
}

// readBuffer is what one read_file needs besides its result, reused
// between calls: a call would otherwise allocate some 140 KB for the
// garbage collector to reclaim.
type readBuffer struct {
	head  [sniffSize]byte
	chunk [readChunk]byte
	r     *bufio.Reader
	lines bytes.Buffer // the numbered lines, before the header goes on
}

// maxKeptLines is the largest lines buffer kept for the next call: one
// that grew for a big read is left to the collector.
const maxKeptLines = 256 << 10

// release returns b to the pool.
func (b *readBuffer) release() {
	if b.lines.Cap() > maxKeptLines {
		b.lines = bytes.Buffer{}
	}
	b.lines.Reset()
	readBuffers.Put(b)
}

var readBuffers = sync.Pool{New: func() any {
	return &readBuffer{r: bufio.NewReaderSize(nil, readChunk)}
}}

// readLines formats the requested range and counts the file's lines.
// b, empty, holds the numbered lines until the result is made.
//
// A page longer than budget characters (header and notes included) ends
// at the last whole line that fits, and its note names the true next
// offset: a client that cuts long results itself (Codex drops their
// middle) would otherwise leave a hole the footer does not tell of.
func readLines(ctx context.Context, path string, lr *lineReader, b *bytes.Buffer, size int64, offset, limit, budget int) (*Result, error) {
	// Room for the whole of a small file with its line numbers, so that
	// the buffer is not regrown and copied line by line (most of a 4 KiB
	// read's allocations); past that, growing costs little in proportion.
	b.Grow(int(min(size+size/2+256, 256<<10)))
	// Lines before the range are skipped without being kept.
	for lr.lines < offset-1 {
		if _, _, err := lr.next(false); err != nil {
			break
		}
		if lr.lines%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	start := offset
	last := offset - 1 + limit
	if last < offset-1 {
		last = math.MaxInt // offset+limit overflowed: no limit
	}
	cut, err := numberLines(ctx, lr, last, b)
	if err != nil {
		return nil, err
	}
	end := lr.lines
	if end < start {
		end = start - 1 // nothing returned: an empty range
	}
	more := lr.more()
	if kept := fitLines(b, budget-pageFrame-len(path)); kept < end-start+1 {
		end, more = start+kept-1, true
	}
	total, counted := lr.count(ctx, MaxLineCount)
	if lr.err != nil {
		return nil, lr.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	r := readRange{path: path, start: start, end: end, total: total, counted: counted, offset: offset,
		truncated: more || cut > 0}
	var notes []string
	if cut > 0 {
		notes = append(notes, cutNote(cut))
	}
	if more {
		of := fmt.Sprintf("of %d", total)
		if !counted {
			of = fmt.Sprintf("of more than %d (the file is %s; lines were counted in the first %s only)", total, formatSize(size), formatSize(MaxLineCount))
		}
		notes = append(notes, fmt.Sprintf("[showing lines %d-%d %s; call read_file with offset=%d to continue]", start, end, of, end+1))
	}
	return numberedResult(r.header(), b, notes), nil
}

// readHead fills head from the start of file, as io.ReadFull does, and
// returns how much it holds. A file of size bytes that one read returns
// whole, short of head, has ended: the read of EOF that would say so is
// skipped. A file that changed size since it was opened is read on to its
// end, as any file is when a read is short of its size.
func readHead(file io.Reader, head []byte, size int64) (int, error) {
	n, err := file.Read(head)
	if n == len(head) || (err == nil && int64(n) == size) || errors.Is(err, io.EOF) {
		return n, nil
	}
	if err != nil {
		return n, err
	}
	m, err := io.ReadFull(file, head[n:])
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return n + m, err
	}
	return n + m, nil
}

// numberLines appends the lines that follow to b, numbered, up to the
// line numbered last, the end of the file or MaxReadText bytes of text,
// and returns how many of them were cut.
func numberLines(ctx context.Context, lr *lineReader, last int, b *bytes.Buffer) (int, error) {
	cut := 0
	for lr.lines < last && b.Len() < MaxReadText {
		if lr.lines%4096 == 0 && ctx.Err() != nil {
			return cut, ctx.Err()
		}
		line, wasCut, err := lr.next(true)
		if err != nil {
			break
		}
		if wasCut {
			cut++
		}
		appendNumbered(b, lr.lines, line)
	}
	return cut, lr.err
}

// pageFrame is room for a page's header line and notes beside its lines.
const pageFrame = 600

// fitLines keeps the first whole lines of b that fit in max bytes (at least
// one, so a page always moves on) and returns how many there are.
func fitLines(b *bytes.Buffer, max int) int {
	data := b.Bytes()
	n, keep := 0, 0
	for i := 0; i < len(data); {
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			j = len(data) - i - 1
		}
		next := i + j + 1
		if next > max && n > 0 {
			b.Truncate(keep)
			return n
		}
		n, keep, i = n+1, next, next
	}
	return n
}

// cutNote is the note below lines of which some were cut.
func cutNote(cut int) string {
	return fmt.Sprintf("[%d line(s) longer than %d characters were cut; use bash (e.g. cut, fold) to see them whole]", cut, MaxLineChars)
}

// readRange is what read_file's header line says about the lines below it.
type readRange struct {
	path               string
	start, end, offset int
	total              int  // lines in the file, or counted so far when !counted
	counted            bool // total is the whole file's
	truncated          bool // more lines follow, or a line was cut
}

// header is the first line of a read_file result, e.g.
//
//	[/w/main.go: lines 1-2000 of 5210, truncated]
//
// The bracket keeps it apart from the numbered lines, which start with
// spaces and digits.
func (r readRange) header() string {
	p := quotePath(r.path)
	switch {
	case r.end < r.start && r.total == 0:
		return fmt.Sprintf("[%s: empty file]", p)
	case r.end < r.start && r.counted:
		return fmt.Sprintf("[%s: no lines: offset %d is past the end of the file, which has %d lines]", p, r.offset, r.total)
	case r.end < r.start:
		return fmt.Sprintf("[%s: no lines: offset %d is past the end of the file]", p, r.offset)
	}
	of := strconv.Itoa(r.total)
	if !r.counted {
		of = "more than " + of
	}
	h := fmt.Sprintf("[%s: lines %d-%d of %s", p, r.start, r.end, of)
	if r.truncated {
		h += ", truncated"
	}
	return h + "]"
}

// quotePath quotes a path for a header line when its name could pass for
// something else: a newline in a file name must not fake a numbered line.
func quotePath(p string) string {
	if strings.ContainsFunc(p, unicode.IsControl) || strings.Contains(p, "]") {
		return strconv.Quote(p)
	}
	return p
}

// appendNumbered writes one line as read_file shows it: the line number
// right-aligned in six columns, a tab, the text.
func appendNumbered(b *bytes.Buffer, n int, line []byte) {
	var num [20]byte
	digits := strconv.AppendInt(num[:0], int64(n), 10)
	for range 6 - len(digits) {
		b.WriteByte(' ')
	}
	b.Write(digits)
	b.WriteByte('\t')
	b.Write(line)
	b.WriteByte('\n')
}

// lineReader reads lines with a bounded buffer: a line longer than the cut
// is kept only up to the cut, the rest is read and dropped, so even a file
// of one 10 GB line costs one buffer.
type lineReader struct {
	r       *bufio.Reader
	chunk   []byte // count's buffer
	line    []byte // next's buffer, reused from line to line
	lines   int    // lines read so far
	scanned int64  // bytes consumed so far
	err     error  // the first read error other than EOF
}

var errNoMoreLines = errors.New("no more lines")

// next reads one line; keep says whether to return its text. The text is
// valid UTF-8 (bad bytes replaced) and cut at MaxLineChars characters; it
// is valid until the next call.
func (lr *lineReader) next(keep bool) ([]byte, bool, error) {
	buf := lr.line[:0]
	defer func() { lr.line = buf[:0] }()
	got := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if len(chunk) > 0 {
			got = true
			lr.scanned += int64(len(chunk))
			// Up to UTFMax bytes per character are enough to cut at
			// MaxLineChars characters; the rest is not kept.
			if keep && len(buf) <= MaxLineChars*utf8.UTFMax {
				room := MaxLineChars*utf8.UTFMax + 1 - len(buf)
				buf = append(buf, chunk[:min(room, len(chunk))]...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			lr.err = err
			return nil, false, err
		}
		if !got {
			return nil, false, errNoMoreLines
		}
		lr.lines++
		break
	}
	if !keep {
		return nil, false, nil
	}
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	text := buf
	if !utf8.Valid(text) {
		text = bytes.ToValidUTF8(text, []byte("\uFFFD"))
	}
	if len(text) > MaxLineChars && utf8.RuneCount(text) > MaxLineChars { // bytes bound characters
		i, count := 0, 0
		for i = range string(text) {
			if count == MaxLineChars {
				break
			}
			count++
		}
		return append(text[:i:i], " … [line cut]"...), true, nil
	}
	return text, false, nil
}

// more reports whether a line follows.
func (lr *lineReader) more() bool {
	_, err := lr.r.Peek(1)
	return err == nil
}

// count counts the remaining lines in fixed-size chunks, stopping once the
// whole scan has reached budget bytes. It reports the total number of lines
// and whether the count is complete.
func (lr *lineReader) count(ctx context.Context, budget int64) (int, bool) {
	total := lr.lines
	pending := false // bytes after the last newline: one more line
	buf := lr.chunk
	for lr.scanned < budget {
		if ctx.Err() != nil {
			return total, false
		}
		n, err := lr.r.Read(buf[:min(int64(len(buf)), budget-lr.scanned)])
		if n > 0 {
			lr.scanned += int64(n)
			total += bytes.Count(buf[:n], []byte{'\n'})
			pending = buf[n-1] != '\n'
		}
		if err != nil {
			if pending {
				total++
			}
			if !errors.Is(err, io.EOF) {
				lr.err = err
			}
			return total, errors.Is(err, io.EOF)
		}
	}
	// The budget ran out; perhaps exactly at the end of the file.
	if _, err := lr.r.Peek(1); errors.Is(err, io.EOF) {
		if pending {
			total++
		}
		return total, true
	}
	return total, false
}

// imageType recognises the images MCP clients display by their magic
// bytes: the extension says nothing about what a file holds.
func imageType(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && bytes.HasPrefix(head, []byte("RIFF")) && string(head[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// binaryReason says why the start of a file is not text (a NUL byte, or
// bytes that are not UTF-8), or "" for text. cut says the sample ends
// mid-file, where a character may be split.
func binaryReason(head []byte, cut bool) string {
	if bytes.IndexByte(head, 0) >= 0 {
		return "it contains NUL bytes"
	}
	if utf8.Valid(head) {
		return "" // 8 bytes at a time while they are ASCII
	}
	if cut {
		// A character split by the end of the sniff is still text.
		for i := 1; i < utf8.UTFMax && i <= len(head); i++ {
			if tail := head[len(head)-i:]; !utf8.FullRune(tail) && utf8.Valid(head[:len(head)-i]) {
				return ""
			}
		}
	}
	return "it is not valid UTF-8"
}

// readImage returns an image as MCP image content, up to MaxImageSize.
func readImage(pol sandbox.ExecutionPolicy, path, mime string, size int64, r io.Reader) (*Result, *ToolError) {
	tooLarge := func(n int64) *ToolError {
		return errorf(CodeTooLarge, "%s is an image (%s) of %s; read_file returns images up to %s: scale it down with bash first",
			path, mime, formatSize(n), formatSize(MaxImageSize))
	}
	if size > MaxImageSize {
		return nil, tooLarge(size)
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxImageSize+1))
	if err != nil {
		return nil, fenceError(NameReadFile, pol, path, err)
	}
	if len(data) > MaxImageSize {
		return nil, tooLarge(int64(len(data))) // it grew while we read it
	}
	return &Result{
		Text:   fmt.Sprintf("[%s: %s image, %s]", quotePath(path), mime, formatSize(int64(len(data)))),
		Images: []Image{{MIMEType: mime, Data: data}},
	}, nil
}
