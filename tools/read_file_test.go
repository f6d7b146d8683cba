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

	tests := []struct {
		name              string
		in                tools.ReadFileInput
		text              string // exact, or prefix when note is set
		note              string
		total, start, end int
		truncated         bool
	}{
		{name: "defaults", in: tools.ReadFileInput{Path: "five.txt"}, text: numbered(1, 5), total: 5, start: 1, end: 5},
		{name: "offset and limit", in: tools.ReadFileInput{Path: "five.txt", Offset: 2, Limit: 2}, text: numbered(2, 3),
			note: "[showing lines 2-3 of 5; call read_file with offset=4 to continue]", total: 5, start: 2, end: 3, truncated: true},
		{name: "limit runs past the end", in: tools.ReadFileInput{Path: "five.txt", Offset: 4, Limit: 10}, text: numbered(4, 5), total: 5, start: 4, end: 5},
		{name: "offset past the end", in: tools.ReadFileInput{Path: "five.txt", Offset: 9}, text: "",
			note: "[offset 9 is past the end of the file: it has 5 lines]", total: 5, start: 9, end: 8},
		{name: "no final newline", in: tools.ReadFileInput{Path: "nonl.txt"}, text: numbered(1, 2), total: 2, start: 1, end: 2},
		{name: "empty file", in: tools.ReadFileInput{Path: "empty.txt"}, text: "", note: "(empty file)", total: 0, start: 1, end: 0},
		{name: "default limit is 2000", in: tools.ReadFileInput{Path: "many.txt"}, text: numbered(1, 2000),
			note: "[showing lines 1-2000 of 2500; call read_file with offset=2001 to continue]", total: 2500, start: 1, end: 2000, truncated: true},
		{name: "absolute path", in: tools.ReadFileInput{Path: filepath.Join(w.ws, "five.txt"), Offset: 5}, text: numbered(5, 5), total: 5, start: 5, end: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, terr := w.tb.ReadFile(bg, w.call, tt.in)
			require.Nil(t, terr)
			want := tt.text
			if tt.note != "" {
				want += tt.note + "\n"
			}
			assert.Equal(t, want, res.Text)
			assert.Equal(t, tt.total, res.Structured["total_lines"])
			assert.Equal(t, tt.start, res.Structured["start_line"])
			assert.Equal(t, tt.end, res.Structured["end_line"])
			assert.Equal(t, tt.truncated, res.Structured["truncated"])
			assert.True(t, filepath.IsAbs(res.Structured["path"].(string)))
		})
	}
}

func TestReadFileLongLines(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	long := strings.Repeat("é", tools.MaxLineChars+500)
	exact := strings.Repeat("x", tools.MaxLineChars)
	w.file(t, "long.txt", "short\n"+long+"\n"+exact+"\nend\n")
	res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: "long.txt"})
	require.Nil(t, terr)
	lines := strings.Split(res.Text, "\n")
	assert.Equal(t, "     1\tshort", lines[0])
	assert.Equal(t, "     2\t"+strings.Repeat("é", tools.MaxLineChars)+" … [line cut]", lines[1])
	assert.Equal(t, "     3\t"+exact, lines[2], "a line of exactly the limit is whole")
	assert.Equal(t, "     4\tend", lines[3])
	assert.Contains(t, res.Text, "1 line(s) longer than 2000 characters were cut")
	assert.Equal(t, 4, res.Structured["total_lines"])
	assert.Equal(t, true, res.Structured["truncated"])
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
	assert.Equal(t, filepath.Join(w.ws, "picture.dat"), res.Structured["path"])
	assert.Equal(t, "image/png", res.Structured["mime_type"])

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
	assert.True(t, strings.HasPrefix(res.Text, "     1\tline 1 of a log"), res.Text)
	assert.Contains(t, res.Text, "    10\tline 10 of a log")
	assert.NotContains(t, res.Text, "line 11 ")
	assert.Equal(t, -1, res.Structured["total_lines"], "2 GiB is more than the counting budget")
	assert.Equal(t, true, res.Structured["truncated"])
	assert.Contains(t, res.Text, "lines were counted in the first 256.0 MiB")
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
	assert.Equal(t, "     1\toutside\n", res.Text)
}

// TestReadFileTextCap: however large the limit, one result carries at most
// MaxReadText bytes of text, and says where to continue.
func TestReadFileTextCap(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	line := strings.Repeat("€", tools.MaxLineChars) + "\n" // 6000 bytes
	w.file(t, "wide.txt", strings.Repeat(line, 2000))
	res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: "wide.txt"})
	require.Nil(t, terr)
	end := res.Structured["end_line"].(int)
	assert.Less(t, end, 2000)
	assert.LessOrEqual(t, len(res.Text), tools.MaxReadText+len(line)+200)
	assert.Equal(t, true, res.Structured["truncated"])
	assert.Contains(t, res.Text, fmt.Sprintf("call read_file with offset=%d to continue", end+1))
}
