package tools_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%6d\tline %d\n", i, i)
	}
	return b.String()
}

func TestReadFileRanges(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	var five strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&five, "line %d\n", i)
	}
	w.file(t, "five.txt", five.String())
	w.file(t, "nonl.txt", "line 1\nline 2")
	w.file(t, "empty.txt", "")
	var many strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&many, "line %d\n", i)
	}
	w.file(t, "many.txt", many.String())

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
		{"negative offset", tools.ReadFileInput{Path: "a.txt", Offset: -1}, sandbox.CodeInvalidArgument, "offset"},
		{"negative limit", tools.ReadFileInput{Path: "a.txt", Limit: -5}, sandbox.CodeInvalidArgument, "limit"},
		{"empty path", tools.ReadFileInput{}, sandbox.CodeInvalidArgument, "path is empty"},
		{"NUL byte", tools.ReadFileInput{Path: "a\x00.txt"}, sandbox.CodeInvalidArgument, "NUL"},
		{"missing", tools.ReadFileInput{Path: "nope/missing.txt"}, sandbox.CodeNotFound, filepath.Join(w.ws, "nope/missing.txt")},
		{"directory", tools.ReadFileInput{Path: "dir"}, sandbox.CodeInvalidArgument, "list_directory"},
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
		requireFileCode(t, terr, sandbox.CodeBinaryFile)
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
	requireFileCode(t, terr, sandbox.CodeTooLarge)
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
