package tools_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plainLines is a file of n lines, "line 1" to "line n".
func plainLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%6d\tline %d\n", i, i)
	}
	return b.String()
}

func TestReadFileRanges(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "five.txt", plainLines(5))
	w.file(t, "nonl.txt", "line 1\nline 2")
	w.file(t, "empty.txt", "")
	w.file(t, "many.txt", plainLines(2500))

	ws := w.ws
	tests := []struct {
		name   string
		in     tools.ReadFileInput
		header string // the first line: path, range, total, truncated
		text   string // the numbered lines
		note   string // the line after them, if any
	}{
		{name: "defaults", in: tools.ReadFileInput{Path: "five.txt"}, header: "[" + ws + "/five.txt: lines 1-5 of 5]", text: numbered(1, 5)},
		{name: "offset and limit", in: tools.ReadFileInput{Path: "five.txt", Offset: 2, Limit: 2},
			header: "[" + ws + "/five.txt: lines 2-3 of 5, truncated]", text: numbered(2, 3),
			note: "[showing lines 2-3 of 5; call read_file with offset=4 to continue]"},
		{name: "limit runs past the end", in: tools.ReadFileInput{Path: "five.txt", Offset: 4, Limit: 10},
			header: "[" + ws + "/five.txt: lines 4-5 of 5]", text: numbered(4, 5)},
		{name: "offset past the end", in: tools.ReadFileInput{Path: "five.txt", Offset: 9},
			header: "[" + ws + "/five.txt: no lines: offset 9 is past the end of the file, which has 5 lines]"},
		{name: "no final newline", in: tools.ReadFileInput{Path: "nonl.txt"}, header: "[" + ws + "/nonl.txt: lines 1-2 of 2]", text: numbered(1, 2)},
		{name: "empty file", in: tools.ReadFileInput{Path: "empty.txt"}, header: "[" + ws + "/empty.txt: empty file]"},
		{name: "default limit is 2000", in: tools.ReadFileInput{Path: "many.txt"},
			header: "[" + ws + "/many.txt: lines 1-2000 of 2500, truncated]", text: numbered(1, 2000),
			note: "[showing lines 1-2000 of 2500; call read_file with offset=2001 to continue]"},
		{name: "absolute path", in: tools.ReadFileInput{Path: filepath.Join(w.ws, "five.txt"), Offset: 5},
			header: "[" + ws + "/five.txt: lines 5-5 of 5]", text: numbered(5, 5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, terr := w.tb.ReadFile(bg, w.call, tt.in)
			require.Nil(t, terr)
			want := tt.header + "\n" + tt.text
			if tt.note != "" {
				want += tt.note + "\n"
			}
			assert.Equal(t, want, res.Text)
			assert.Nil(t, res.Structured, "read_file is text only: clients would show the model structuredContent instead")
		})
	}
}

// TestReadFileTail: a negative offset counts from the end. The lines
// before a small file's tail are counted, so its lines keep their real
// numbers and the header its total.
func TestReadFileTail(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "five.txt", plainLines(5))
	w.file(t, "nonl.txt", "line 1\nline 2\nline 3")
	w.file(t, "blank.txt", "line 1\n\n\n")
	w.file(t, "empty.txt", "")
	w.file(t, "newline.txt", "\n")
	w.file(t, "many.txt", plainLines(2500))

	ws := w.ws
	tests := []struct {
		name   string
		in     tools.ReadFileInput
		header string
		text   string
		note   string
	}{
		{name: "the last two lines", in: tools.ReadFileInput{Path: "five.txt", Offset: -2},
			header: "[" + ws + "/five.txt: lines 4-5 of 5]", text: numbered(4, 5)},
		{name: "the last line", in: tools.ReadFileInput{Path: "five.txt", Offset: -1},
			header: "[" + ws + "/five.txt: lines 5-5 of 5]", text: numbered(5, 5)},
		{name: "more lines than the file has", in: tools.ReadFileInput{Path: "five.txt", Offset: -9},
			header: "[" + ws + "/five.txt: lines 1-5 of 5]", text: numbered(1, 5)},
		{name: "exactly the file", in: tools.ReadFileInput{Path: "five.txt", Offset: -5},
			header: "[" + ws + "/five.txt: lines 1-5 of 5]", text: numbered(1, 5)},
		{name: "with a limit", in: tools.ReadFileInput{Path: "five.txt", Offset: -4, Limit: 2},
			header: "[" + ws + "/five.txt: lines 2-3 of 5, truncated]", text: numbered(2, 3),
			note: "[showing lines 2-3 of 5; call read_file with offset=4 to continue]"},
		{name: "no final newline", in: tools.ReadFileInput{Path: "nonl.txt", Offset: -2},
			header: "[" + ws + "/nonl.txt: lines 2-3 of 3]", text: numbered(2, 3)},
		{name: "empty last lines count", in: tools.ReadFileInput{Path: "blank.txt", Offset: -2},
			header: "[" + ws + "/blank.txt: lines 2-3 of 3]", text: "     2\t\n     3\t\n"},
		{name: "a lone newline is one empty line", in: tools.ReadFileInput{Path: "newline.txt", Offset: -3},
			header: "[" + ws + "/newline.txt: lines 1-1 of 1]", text: "     1\t\n"},
		{name: "empty file", in: tools.ReadFileInput{Path: "empty.txt", Offset: -10}, header: "[" + ws + "/empty.txt: empty file]"},
		{name: "the tail of a longer file", in: tools.ReadFileInput{Path: "many.txt", Offset: -3},
			header: "[" + ws + "/many.txt: lines 2498-2500 of 2500]", text: numbered(2498, 2500)},
		{name: "the default limit applies", in: tools.ReadFileInput{Path: "many.txt", Offset: -2400},
			header: "[" + ws + "/many.txt: lines 101-2100 of 2500, truncated]", text: numbered(101, 2100),
			note: "[showing lines 101-2100 of 2500; call read_file with offset=2101 to continue]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, terr := w.tb.ReadFile(bg, w.call, tt.in)
			require.Nil(t, terr)
			want := tt.header + "\n" + tt.text
			if tt.note != "" {
				want += tt.note + "\n"
			}
			assert.Equal(t, want, res.Text)
			assert.Nil(t, res.Structured)
		})
	}

	// Through the table: the schema allows a negative offset, and the
	// decoder passes it on.
	res, terr := toolNamed(t, "read_file").Run(bg, w.tb, w.call, map[string]any{"path": "five.txt", "offset": -1})
	require.Nil(t, terr)
	assert.Equal(t, "["+ws+"/five.txt: lines 5-5 of 5]\n"+numbered(5, 5), res.Text)
	assert.Less(t, *toolNamed(t, "read_file").InputSchema().Properties["offset"].Minimum, float64(0))
}

// TestReadFileTailAcrossBlocks: the tail is found across the blocks it is
// read backwards in, whatever the line lengths, empty lines and final
// newline, and says what a forward read of the same lines says.
func TestReadFileTailAcrossBlocks(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	rng := rand.New(rand.NewPCG(13, 1))
	fromStart, fromEnd := 0, 0
	for round := range 12 {
		var b strings.Builder
		var lines []string
		size := 1000 + rng.IntN(400<<10) // beyond the 64 KiB blocks and MaxTailCount
		for b.Len() < size {
			var l string
			switch rng.IntN(8) {
			case 0:
				l = ""
			case 1:
				l = strings.Repeat("w", 1000+rng.IntN(70<<10)) // longer than a block, cut when shown
			default:
				l = fmt.Sprintf("line %d %s", len(lines)+1, strings.Repeat("-", rng.IntN(80)))
			}
			lines = append(lines, l)
			b.WriteString(l + "\n")
		}
		content := b.String()
		if round%2 == 1 {
			content = strings.TrimSuffix(content, "\n") // no final newline
		}
		name := fmt.Sprintf("r%d.txt", round)
		w.file(t, name, content)
		for _, n := range []int{1, 2, 7, 100, len(lines) - 1, len(lines), len(lines) + 5} {
			if n < 1 {
				continue
			}
			res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: name, Offset: -n, Limit: 1 << 30})
			require.Nil(t, terr)
			h, rest := header(t, res.Text)
			first := max(1, len(lines)-n+1)
			if !strings.Contains(h, "counted from the end") {
				forward, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: name, Offset: first, Limit: 1 << 30})
				require.Nil(t, terr)
				require.Equal(t, forward.Text, res.Text, "round %d, the last %d of %d lines", round, n, len(lines))
				fromStart++
				continue
			}
			// Numbered from the end: the same lines, the numbers shifted.
			forward, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: name, Offset: first, Limit: 1 << 30})
			require.Nil(t, terr)
			_, want := header(t, forward.Text)
			got := regexp.MustCompile(`(?m)^ *-\d+\t`).ReplaceAllString(rest, "")
			want = regexp.MustCompile(`(?m)^ *\d+\t`).ReplaceAllString(want, "")
			want = want[:strings.LastIndex(strings.TrimSuffix(want, "\n"), "\n")+1] // the notes differ
			require.True(t, strings.HasPrefix(got, want), "round %d, the last %d of %d lines", round, n, len(lines))
			require.Contains(t, rest, fmt.Sprintf("%6d\t", -n))
			fromEnd++
		}
	}
	assert.Positive(t, fromStart, "some tails numbered from the start")
	assert.Positive(t, fromEnd, "some tails numbered from the end")
}

// tailFile makes a file of size bytes whose first lines and last lines
// are text and whose middle is a hole (NUL bytes, taking no disk space):
// reading it all would take long, reading its ends takes no time.
func tailFile(t testing.TB, p string, size int64, lastLines int) {
	t.Helper()
	f, err := os.Create(p)
	require.NoError(t, err)
	defer f.Close()
	for i := 1; i <= 1000; i++ { // more than the sniff that tells text from binary
		fmt.Fprintf(f, "head %d of a log that goes on and on\n", i)
	}
	var tail strings.Builder
	for i := lastLines; i >= 1; i-- {
		fmt.Fprintf(&tail, "tail %d from the end of a log that goes on and on\n", i)
	}
	require.NoError(t, f.Truncate(size-int64(tail.Len())))
	_, err = f.WriteAt([]byte(tail.String()), size-int64(tail.Len()))
	require.NoError(t, err)
}

// TestReadFileTailHuge reads the last lines of a 1 TiB file: it must not
// read the file (that would take hours), its memory must not depend on the
// file's size, and its lines, whose numbers from the start would take the
// whole file to count, are numbered from the end.
func TestReadFileTailHuge(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	p := filepath.Join(w.ws, "huge.log")
	tailFile(t, p, 1<<40, 50)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	started := time.Now()
	res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: p, Offset: -20})
	took := time.Since(started)
	runtime.ReadMemStats(&after)
	require.Nil(t, terr)
	assert.Less(t, took, 10*time.Second, "the tail is read from the end")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated by the call")

	h, rest := header(t, res.Text)
	assert.Equal(t, "["+p+": lines -20 to -1 counted from the end, of more than 20]", h)
	lines := strings.Split(strings.TrimSuffix(rest, "\n"), "\n")
	require.Len(t, lines, 21, rest)
	assert.Equal(t, "   -20\ttail 20 from the end of a log that goes on and on", lines[0])
	assert.Equal(t, "    -1\ttail 1 from the end of a log that goes on and on", lines[19])
	assert.Equal(t, "[line numbers count from the end (-1 is the last line): the file is 1.0 TiB (1099511627776 bytes), "+
		"and the lines before these were not counted; a more negative offset reads further back]", lines[20])

	// A limit shorter than the tail: the rest is one call away, counted
	// from the end too.
	res, terr = w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: p, Offset: -30, Limit: 5})
	require.Nil(t, terr)
	h, rest = header(t, res.Text)
	assert.Equal(t, "["+p+": lines -30 to -26 counted from the end, of more than 30, truncated]", h)
	assert.True(t, strings.HasPrefix(rest, "   -30\ttail 30 from"), rest)
	assert.Contains(t, rest, "   -26\ttail 26 from")
	assert.NotContains(t, rest, "tail 25 ")
	assert.Contains(t, rest, "[showing lines -30 to -26 counted from the end; call read_file with offset=-25 to continue]")
	res, terr = w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: p, Offset: -25, Limit: 1})
	require.Nil(t, terr)
	_, rest = header(t, res.Text)
	assert.True(t, strings.HasPrefix(rest, "   -25\ttail 25 from"), rest)

	// The file's head is where it always was.
	res, terr = w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: p, Limit: 1})
	require.Nil(t, terr)
	_, rest = header(t, res.Text)
	assert.True(t, strings.HasPrefix(rest, "     1\thead 1 of a log"), rest)
}

// TestReadFileTailLongLine: a line longer than MaxTailScan before the
// tail stops the search for its start: the lines after it are shown, and
// the call stays bounded.
func TestReadFileTailLongLine(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	head := strings.Repeat("some text at the head\n", 1000)
	hole := func(name, tail string) string {
		p := filepath.Join(w.ws, name)
		f, err := os.Create(p)
		require.NoError(t, err)
		defer f.Close()
		_, err = f.WriteString(head)
		require.NoError(t, err)
		size := int64(tools.MaxTailScan + 64<<20)
		require.NoError(t, f.Truncate(size-int64(len(tail))))
		_, err = f.WriteAt([]byte(tail), size-int64(len(tail)))
		require.NoError(t, err)
		return p
	}
	p := hole("long.log", "the end of a long line\nlast\n")
	res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: p, Offset: -5})
	require.Nil(t, terr)
	h, rest := header(t, res.Text)
	assert.Equal(t, "["+p+": lines -1 to -1 counted from the end, of more than 1]", h)
	assert.True(t, strings.HasPrefix(rest, "    -1\tlast\n[the line before these is longer than 256.0 MiB (268435456 bytes), more than read_file reads back from the end: use bash (e.g. tail -c) to see it]\n"), rest)

	p = hole("one.log", "the end of the last line\n")
	res, terr = w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: p, Offset: -1})
	require.Nil(t, terr)
	assert.Equal(t, "["+p+": no lines: the last line is longer than 256.0 MiB (268435456 bytes), more than read_file reads back from the end; use bash (e.g. tail -c 2000) to see its end]\n", res.Text)
}

// TestReadFileTailCountBudget: the lines before a tail are counted up to
// MaxTailCount bytes, and no further.
func TestReadFileTailCountBudget(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	line := strings.Repeat("x", 99) + "\n"
	within := tools.MaxTailCount / len(line)                           // lines that fit the budget
	w.file(t, "within.txt", strings.Repeat(line, within+2))            // the tail's start is at the budget or before
	w.file(t, "beyond.txt", strings.Repeat(line, within+3+within/100)) // and past it
	res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: "within.txt", Offset: -2})
	require.Nil(t, terr)
	h, _ := header(t, res.Text)
	assert.Equal(t, fmt.Sprintf("[%s: lines %d-%d of %d]", filepath.Join(w.ws, "within.txt"), within+1, within+2, within+2), h)
	res, terr = w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: "beyond.txt", Offset: -2})
	require.Nil(t, terr)
	h, _ = header(t, res.Text)
	assert.Equal(t, "["+filepath.Join(w.ws, "beyond.txt")+": lines -2 to -1 counted from the end, of more than 2]", h)
}

// header splits a read_file result into its header line and the rest.
func header(t *testing.T, text string) (string, string) {
	t.Helper()
	h, rest, ok := strings.Cut(text, "\n")
	require.True(t, ok, "no header line in %q", text)
	require.True(t, strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]"), "header %q", h)
	return h, rest
}

// TestReadFileHeaderPath: a file name that could pass for a line of the
// file is quoted in the header.
func TestReadFileHeaderPath(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "odd\n     2\tfake].txt", "real\n")
	res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: "odd\n     2\tfake].txt"})
	require.Nil(t, terr)
	h, rest := header(t, res.Text)
	assert.Equal(t, "["+strconv.Quote(filepath.Join(w.ws, "odd\n     2\tfake].txt"))+": lines 1-1 of 1]", h)
	assert.Equal(t, "     1\treal\n", rest)
}

func TestReadFileLongLines(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	long := strings.Repeat("é", tools.MaxLineChars+500)
	exact := strings.Repeat("x", tools.MaxLineChars)
	w.file(t, "long.txt", "short\n"+long+"\n"+exact+"\nend\n")
	res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: "long.txt"})
	require.Nil(t, terr)
	h, rest := header(t, res.Text)
	assert.Equal(t, "["+filepath.Join(w.ws, "long.txt")+": lines 1-4 of 4, truncated]", h, "a cut line makes the result truncated")
	lines := strings.Split(rest, "\n")
	assert.Equal(t, "     1\tshort", lines[0])
	assert.Equal(t, "     2\t"+strings.Repeat("é", tools.MaxLineChars)+" … [line cut]", lines[1])
	assert.Equal(t, "     3\t"+exact, lines[2], "a line of exactly the limit is whole")
	assert.Equal(t, "     4\tend", lines[3])
	assert.Contains(t, res.Text, "1 line(s) longer than 2000 characters were cut")
}

func TestReadFileArguments(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "a.txt", "a\n")
	require.NoError(t, os.Mkdir(filepath.Join(w.ws, "dir"), 0o755))
	tests := []struct {
		name string
		in   tools.ReadFileInput
		code string
		msg  string
	}{
		{"negative limit", tools.ReadFileInput{Path: "a.txt", Limit: -5}, tools.CodeInvalidArgument, "limit"},
		{"empty path", tools.ReadFileInput{}, tools.CodeInvalidArgument, "path is empty"},
		{"NUL byte", tools.ReadFileInput{Path: "a\x00.txt"}, tools.CodeInvalidArgument, "NUL"},
		{"missing", tools.ReadFileInput{Path: "nope/missing.txt"}, tools.CodeNotFound, filepath.Join(w.ws, "nope/missing.txt")},
		{"directory", tools.ReadFileInput{Path: "dir"}, tools.CodeInvalidArgument, "list_directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, terr := w.tb.ReadFile(bg, w.call, tt.in)
			requireFileCode(t, terr, tt.code)
			assert.Contains(t, terr.Message, tt.msg)
		})
	}
}

func TestReadFileBinary(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "nul.bin", "abc\x00def")
	w.file(t, "latin1.txt", "caf\xe9\n")
	w.file(t, "doc.pdf", "%PDF-1.4\n\x00\x01binary")
	// A multi-byte character split by the 8 KiB sniff is still text.
	w.file(t, "split.txt", strings.Repeat(strings.Repeat("a", 99)+"\n", 81)+strings.Repeat("a", 91)+"é\n")
	for name, want := range map[string]string{"nul.bin": "application/octet-stream", "latin1.txt": "text/plain", "doc.pdf": "application/pdf"} {
		_, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: name})
		requireFileCode(t, terr, tools.CodeBinaryFile)
		assert.Contains(t, terr.Message, want, name)
		assert.Contains(t, terr.Message, "bytes", "names the size")
	}
	res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: "split.txt"})
	require.Nil(t, terr)
	assert.Contains(t, res.Text, "é")
}

func TestReadFileImage(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	// The extension lies: the magic bytes decide.
	w.file(t, "picture.dat", buf.String())
	res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: "picture.dat"})
	require.Nil(t, terr)
	require.Len(t, res.Images, 1)
	assert.Equal(t, "image/png", res.Images[0].MIMEType)
	assert.Equal(t, buf.Bytes(), res.Images[0].Data)
	assert.Equal(t, fmt.Sprintf("[%s: image/png image, %d bytes]", filepath.Join(w.ws, "picture.dat"), buf.Len()), res.Text)
	assert.Nil(t, res.Structured)

	big := filepath.Join(w.ws, "big.png")
	require.NoError(t, os.WriteFile(big, buf.Bytes(), 0o644))
	require.NoError(t, os.Truncate(big, tools.MaxImageSize+1))
	_, terr = w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: "big.png"})
	requireFileCode(t, terr, tools.CodeTooLarge)
}

// TestReadFileHugeSparse reads 10 lines of a 2 GiB file: the memory used
// must not depend on the file's size, and counting its lines must stop.
func TestReadFileHugeSparse(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	p := filepath.Join(w.ws, "huge.log")
	f, err := os.Create(p)
	require.NoError(t, err)
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(f, "line %d of a log that goes on and on\n", i)
	}
	require.NoError(t, f.Truncate(2<<30))
	require.NoError(t, f.Close())

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: p, Limit: 10})
	runtime.ReadMemStats(&after)
	require.Nil(t, terr)
	const budget = 20 << 20
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(budget), "bytes allocated by the call")
	assert.Less(t, int64(after.HeapInuse)-int64(before.HeapInuse), int64(budget), "heap growth")
	h, rest := header(t, res.Text)
	assert.Equal(t, "["+p+": lines 1-10 of more than 1000, truncated]", h, "2 GiB is more than the counting budget")
	assert.True(t, strings.HasPrefix(rest, "     1\tline 1 of a log"), res.Text)
	assert.Contains(t, rest, "    10\tline 10 of a log")
	assert.NotContains(t, rest, "line 11 ")
	assert.Contains(t, rest, "lines were counted in the first 256.0 MiB")
}

// TestReadFileDenied: the read-deny list holds whichever way the path is
// spelled, and the refusal never shows the content.
func TestReadFileDenied(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	require.NoError(t, os.Symlink(filepath.Join(w.home, ".ssh"), filepath.Join(w.ws, "keys")))
	require.NoError(t, os.Symlink(w.canary, filepath.Join(w.ws, "id")))
	rel, err := filepath.Rel(w.ws, w.canary)
	require.NoError(t, err)
	for _, p := range []string{w.canary, rel, "keys/id_canary", "id", filepath.Join(w.state, "http-token"), filepath.Join(w.ws, "keys", "..", "keys", "id_canary")} {
		t.Run(p, func(t *testing.T) {
			res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: p})
			require.Nil(t, res)
			requireFileDenied(t, terr, sandbox.WorkspaceWrite)
			assert.Contains(t, terr.Message, "read-deny")
			assert.NotContains(t, terr.Message, "sandbox_permissions", "no mode makes it readable: no escalation hint")
		})
	}
	// The server's own process files, and magic links, are refused too.
	for _, p := range []string{"/proc/self/environ", "/proc/self/root" + w.canary, fmt.Sprintf("/proc/%d/cmdline", os.Getpid())} {
		_, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: p})
		requireFileDenied(t, terr, sandbox.WorkspaceWrite)
	}
	// Reading outside the workspace is fine.
	res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: filepath.Join(w.outside, "file.txt")})
	require.Nil(t, terr)
	assert.Equal(t, "["+filepath.Join(w.outside, "file.txt")+": lines 1-1 of 1]\n     1\toutside\n", res.Text)
}

// TestReadFileTextCap: however large the limit, one result carries at most
// MaxReadText bytes of text, and says where to continue.
func TestReadFileTextCap(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	line := strings.Repeat("€", tools.MaxLineChars) + "\n" // 6000 bytes
	w.file(t, "wide.txt", strings.Repeat(line, 2000))
	res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: "wide.txt"})
	require.Nil(t, terr)
	h, _ := header(t, res.Text)
	var end int
	_, err := fmt.Sscanf(h, "["+filepath.Join(w.ws, "wide.txt")+": lines 1-%d of 2000, truncated]", &end)
	require.NoError(t, err, h)
	assert.Less(t, end, 2000)
	assert.LessOrEqual(t, len(res.Text), tools.MaxReadText+len(line)+400)
	assert.Contains(t, res.Text, fmt.Sprintf("call read_file with offset=%d to continue", end+1))
}

// TestReadFileAroundTheSniff: a file that ends within the first read
// (8 KiB) is read from it alone; one a byte longer, or exactly that long,
// is read on from the file. Each is whole, forwards and from the end.
func TestReadFileAroundTheSniff(t *testing.T) {
	const sniff = 8 << 10
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	for _, size := range []int{sniff - 1, sniff, sniff + 1, 3*sniff + 5} {
		body := plainLines(size / 10)
		body += strings.Repeat("z", size-len(body)-1) + "\n"
		require.Len(t, body, size)
		name := fmt.Sprintf("f%d.txt", size)
		w.file(t, name, body)
		lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")

		res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: name, Limit: 5000})
		require.Nil(t, terr, size)
		var want strings.Builder
		fmt.Fprintf(&want, "[%s: lines 1-%d of %d]\n", filepath.Join(w.ws, name), len(lines), len(lines))
		for i, l := range lines {
			fmt.Fprintf(&want, "%6d\t%s\n", i+1, l)
		}
		assert.Equal(t, want.String(), res.Text, "size %d", size)

		res, terr = w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: name, Offset: -1})
		require.Nil(t, terr, size)
		assert.Contains(t, res.Text, fmt.Sprintf("%6d\t%s\n", len(lines), lines[len(lines)-1]), "size %d: the last line", size)
	}
	w.file(t, "small.bin", "abc\x00def")
	_, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: "small.bin"})
	requireFileCode(t, terr, tools.CodeBinaryFile)
	assert.Contains(t, terr.Message, "(7 bytes;", "the size of a file read whole is its length")
}
