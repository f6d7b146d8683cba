package tools

import (
	"bytes"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outputOf writes each chunk in turn to a fresh buffer, closes it and
// returns what String reports.
func outputOf(t testing.TB, maxChars int, chunks ...[]byte) (string, bool, int) {
	t.Helper()
	b := NewOutputBuffer(maxChars)
	for _, c := range chunks {
		n, err := b.Write(c)
		require.NoError(t, err)
		require.Equal(t, len(c), n, "Write must report every byte written")
	}
	require.NoError(t, b.Close())
	return b.String()
}

func TestOutputSanitize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain text", "hello\nworld\n", "hello\nworld\n"},
		{"tab kept", "a\tb\n", "a\tb\n"},

		// CSI.
		{"ls --color", "\x1b[0m\x1b[01;34mdir\x1b[0m  \x1b[01;32mrun.sh\x1b[0m  \x1b[01;36mlink\x1b[0m\n", "dir  run.sh  link\n"},
		{"sgr reset short form", "\x1b[1;31mred\x1b[m plain", "red plain"},
		{"private mode", "\x1b[?25lhidden cursor\x1b[?25h", "hidden cursor"},
		{"erase line", "\x1b[2Kdone", "done"},
		{"csi with intermediate", "\x1b[1 qx", "x"},
		{"csi keeps newline", "\x1b[1\n2mx", "\nx"},
		{"csi cancelled by CAN", "\x1b[12\x18x", "x"},
		{"csi cancelled by SUB", "\x1b[12\x1ax", "x"},
		{"csi abandoned for a new escape", "\x1b[12\x1b[31mx", "x"},
		{"csi does not swallow utf-8", "\x1b[1é", "é"},
		{"c1 csi", "\u009b31mred\u009b0m", "red"},

		// OSC and other strings.
		{"osc title ended by BEL", "\x1b]0;my title\x07after", "after"},
		{"osc title ended by ESC backslash", "\x1b]2;my title\x1b\\after", "after"},
		{"osc hyperlink", "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\ text", "link text"},
		{"osc with utf-8 title", "\x1b]0;tïtle ✓\x07x", "x"},
		{"runaway osc ends at newline", "\x1b]0;oops\nnext line", "\nnext line"},
		{"osc cancelled by CAN", "\x1b]0;t\x18x", "x"},
		{"c1 osc", "\u009d0;title\x07x", "x"},
		{"dcs", "\x1bPq#0;2;0;0;0#0~~@@\n-\x1b\\after", "after"},
		{"apc kitty graphics", "\x1b_Gf=100,a=T;iVBORw0KGgo=\x1b\\ok", "ok"},
		{"pm", "\x1b^private\x1b\\ok", "ok"},
		{"sos", "\x1bXstring\x1b\\ok", "ok"},

		// Other escapes.
		{"save and restore cursor", "\x1b7saved\x1b8", "saved"},
		{"reverse index", "\x1bMup", "up"},
		{"keypad modes", "\x1b=\x1b>keys", "keys"},
		{"full reset", "\x1bcclear", "clear"},
		{"charset selection", "\x1b(Bplain\x1b)0text", "plaintext"},
		{"dec line attributes", "\x1b#8x", "x"},
		{"esc esc", "\x1b\x1b[31mx", "x"},
		{"esc before newline", "a\x1b\nb", "a\nb"},
		{"esc before tab", "a\x1b\tb", "a\tb"},
		{"esc before utf-8", "\x1bé", "é"},
		{"esc at end", "abc\x1b", "abc"},
		{"esc intermediate at end", "abc\x1b(", "abc"},

		// Line endings.
		{"crlf", "a\r\nb\r\n", "a\nb\n"},
		{"lone cr progress bar", "10%\r20%\r30%\r", "10%\n20%\n30%\n"},
		{"progress bar with erase", "\r\x1b[K 10%\r\x1b[K 20%\r\x1b[K100%\n", "\n 10%\n 20%\n100%\n"},
		{"cr then escape then lf is one break", "a\r\x1b[0m\nb", "a\nb"},
		{"cr then BEL then lf is one break", "a\r\x07\nb", "a\nb"},
		{"cr cr lf", "a\r\r\nb", "a\n\nb"},
		{"lf cr", "a\n\rb", "a\n\nb"},
		{"crlf crlf", "\r\n\r\n", "\n\n"},
		{"cr then text then lf", "a\rb\nc", "a\nb\nc"},

		// Control characters.
		{"BEL dropped", "ding\x07dong\x07", "dingdong"},
		{"other C0 dropped", "a\x00b\x01c\x08d\x0be\x0cf\x7fg", "abcdefg"},
		{"C1 dropped", "a\u0085b\u0080c", "abc"},
		{"C1 apc string", "a\u009fpayload\x07b", "ab"},
		{"C1 string terminator dropped", "a\u009cb", "ab"},

		// UTF-8.
		{"valid utf-8", "héllo 世界 🎉\n", "héllo 世界 🎉\n"},
		{"encoded replacement character kept", "a\uFFFDb", "a\uFFFDb"},
		{"invalid byte", "a\xffb", "a\uFFFDb"},
		{"raw 8-bit csi byte is not utf-8", "a\x9bb", "a\uFFFDb"},
		{"lone continuation bytes", "\x80\x81", "\uFFFD\uFFFD"},
		{"truncated sequence then ascii", "\xe2\x82A", "\uFFFD\uFFFDA"},
		{"truncated sequence then escape", "\xe2\x82\x1b[31mA", "\uFFFD\uFFFDA"},
		{"truncated sequence then cr", "\xe2\r\n", "\uFFFD\n"},
		{"truncated sequence then lead byte", "\xe2\xe2\x82\xac", "\uFFFD€"},
		{"overlong", "\xc0\xaf", "\uFFFD\uFFFD"},
		{"surrogate", "\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"},
		{"truncated at end", "ok\xf0\x9f\x8e", "ok\uFFFD\uFFFD\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)

			got, truncated, cut := outputOf(t, 0, in)
			assert.Equal(t, tt.want, got)
			assert.False(t, truncated)
			assert.Zero(t, cut)

			// Every rule must hold across a Write boundary, wherever it
			// falls: in an escape sequence, a CRLF or a character.
			for i := 0; i <= len(in); i++ {
				got, _, _ := outputOf(t, 0, in[:i], in[i:])
				assert.Equal(t, tt.want, got, "split at byte %d", i)
			}
			var bytewise [][]byte
			for i := range in {
				bytewise = append(bytewise, in[i:i+1])
			}
			got, _, _ = outputOf(t, 0, bytewise...)
			assert.Equal(t, tt.want, got, "one byte per write")
		})
	}
}

func TestOutputSplitRuneIsReassembled(t *testing.T) {
	b := NewOutputBuffer(0)
	_, _ = b.Write([]byte("caf\xc3"))

	// The first byte of é alone is not a character yet: not shown, not
	// replaced.
	got, _, _ := b.String()
	assert.Equal(t, "caf", got)

	_, _ = b.Write([]byte("\xa9!"))
	got, _, _ = b.String()
	assert.Equal(t, "café!", got)
}

func TestOutputCloseFlushesPartialRune(t *testing.T) {
	b := NewOutputBuffer(0)
	_, _ = b.Write([]byte("ab\xf0\x9f"))
	require.NoError(t, b.Close())
	got, _, _ := b.String()
	assert.Equal(t, "ab\uFFFD\uFFFD", got)

	// Close ends the stream: what follows starts afresh.
	_, _ = b.Write([]byte("\x8e\x89c"))
	got, _, _ = b.String()
	assert.Equal(t, "ab\uFFFD\uFFFD\uFFFD\uFFFDc", got)
}

// outputLines returns lines "line01\n" … up to n.
func outputLines(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "line%02d\n", i)
	}
	return sb.String()
}

func TestOutputCap(t *testing.T) {
	tests := []struct {
		name      string
		maxChars  int
		in        string
		want      string
		truncated bool
		cut       int
	}{
		{
			name:     "below the cap",
			maxChars: 100,
			in:       "short\noutput\n",
			want:     "short\noutput\n",
		},
		{
			name:     "exactly at the cap",
			maxChars: 10,
			in:       "0123456789",
			want:     "0123456789",
		},
		{
			name:      "one over the cap",
			maxChars:  10,
			in:        "0123456789A",
			want:      "01234\n[output truncated: 1 character cut from the middle]\n6789A",
			truncated: true,
			cut:       1,
		},
		{
			name:      "no newline near the cut: rune boundaries",
			maxChars:  20,
			in:        "abcdefghijklmnopqrstuvwxyz0123456789",
			want:      "abcdefghij\n[output truncated: 16 characters cut from the middle]\n0123456789",
			truncated: true,
			cut:       16,
		},
		{
			name:      "characters, not bytes",
			maxChars:  4,
			in:        "éééé世界世界🎉🎉",
			want:      "éé\n[output truncated: 6 characters cut from the middle]\n🎉🎉",
			truncated: true,
			cut:       6,
		},
		{
			// head: 24 characters end inside line04, snapped back to the
			// end of line03; tail: 24 characters start inside line17,
			// snapped forward to line18.
			name:      "snapped to line boundaries",
			maxChars:  48,
			in:        outputLines(20),
			want:      "line01\nline02\nline03\n[output truncated: 98 characters cut from the middle]\nline18\nline19\nline20\n",
			truncated: true,
			cut:       98,
		},
		{
			// head: 20 characters end just before a newline, tail: 20
			// characters start inside line18. The head is a whole line
			// already; the tail still needs snapping.
			name:      "head already at a line end",
			maxChars:  40,
			in:        outputLines(20),
			want:      "line01\nline02\nline03\n[output truncated: 106 characters cut from the middle]\nline19\nline20\n",
			truncated: true,
			cut:       106,
		},
		{
			// tail: the 21 last characters start right after a newline.
			name:      "tail already at a line start",
			maxChars:  42,
			in:        outputLines(20),
			want:      "line01\nline02\nline03\n[output truncated: 98 characters cut from the middle]\nline18\nline19\nline20\n",
			truncated: true,
			cut:       98,
		},
		{
			// Snapping counts characters, not bytes.
			name:      "snapped tail, multi-byte lines",
			maxChars:  10,
			in:        strings.Repeat("éé\n", 10),
			want:      "éé\néé\n[output truncated: 22 characters cut from the middle]\néé\n",
			truncated: true,
			cut:       22,
		},
		{
			name:      "snapped head and tail, multi-byte lines",
			maxChars:  14,
			in:        strings.Repeat("éé\n", 10),
			want:      "éé\néé\n[output truncated: 18 characters cut from the middle]\néé\néé\n",
			truncated: true,
			cut:       18,
		},
		{
			// A newline further than 200 characters from the cut is not
			// worth the loss: cut between characters.
			name:      "newline too far to snap to",
			maxChars:  1000,
			in:        "start\n" + strings.Repeat("x", 3000) + "\nend\n",
			want:      "start\n" + strings.Repeat("x", 494) + "\n[output truncated: 2011 characters cut from the middle]\n" + strings.Repeat("x", 495) + "\nend\n",
			truncated: true,
			cut:       2011,
		},
		{
			name:      "sanitised before counting",
			maxChars:  10,
			in:        "\x1b[31m01234\x1b[0m56789\r\nabcde\x07",
			want:      "01234\n[output truncated: 6 characters cut from the middle]\nabcde",
			truncated: true,
			cut:       6,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, truncated, cut := outputOf(t, tt.maxChars, []byte(tt.in))
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.truncated, truncated)
			assert.Equal(t, tt.cut, cut)

			// Whatever the write sizes.
			var chunks [][]byte
			for s := tt.in; s != ""; {
				n := min(7, len(s))
				chunks = append(chunks, []byte(s[:n]))
				s = s[n:]
			}
			got, _, _ = outputOf(t, tt.maxChars, chunks...)
			assert.Equal(t, tt.want, got, "in 7-byte writes")
		})
	}
}

func TestOutputCutCountsEveryCharacter(t *testing.T) {
	// What is shown plus what was cut is all that was written.
	in := outputLines(5000)
	got, truncated, cut := outputOf(t, 0, []byte(in))
	require.True(t, truncated)
	head, tail, ok := strings.Cut(got, fmt.Sprintf("[output truncated: %d characters cut from the middle]\n", cut))
	require.True(t, ok)
	assert.Equal(t, utf8.RuneCountInString(in), utf8.RuneCountInString(head)+cut+utf8.RuneCountInString(tail))
	assert.True(t, strings.HasPrefix(in, head))
	assert.True(t, strings.HasSuffix(in, tail))
	assert.LessOrEqual(t, utf8.RuneCountInString(head)+utf8.RuneCountInString(tail), DefaultMaxOutput)
}

func TestOutputDefaultCap(t *testing.T) {
	for _, maxChars := range []int{0, -1} {
		in := strings.Repeat("y", DefaultMaxOutput)
		got, truncated, _ := outputOf(t, maxChars, []byte(in))
		assert.Equal(t, in, got)
		assert.False(t, truncated)

		_, truncated, cut := outputOf(t, maxChars, []byte(in+"z"))
		assert.True(t, truncated)
		assert.Equal(t, 1, cut)
	}
}

func TestOutputTotal(t *testing.T) {
	b := NewOutputBuffer(10)
	_, _ = b.Write([]byte("\x1b[31m"))
	_, _ = b.Write([]byte(strings.Repeat("abc\r\n", 100)))
	assert.Equal(t, int64(5+500), b.Total())
}

// TestOutputMemoryBounded writes 50 MB and checks that the buffer holds on
// to a bounded amount of it: a runaway `yes` must not grow the server.
func TestOutputMemoryBounded(t *testing.T) {
	// Mostly plain lines, as real output is, with some of everything the
	// sanitiser handles.
	chunk := make([]byte, 0, 64<<10)
	for i := 0; len(chunk) < cap(chunk)-128; i++ {
		if i%20 == 0 {
			chunk = fmt.Appendf(chunk, "\x1b[32m%06d\x1b[0m progress %d%%\r héllo wörld ✓\r\n", i, i%100)
		} else {
			chunk = fmt.Appendf(chunk, "%06d compiling package number %d of the build\n", i, i)
		}
	}
	const total = 50 << 20

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	b := NewOutputBuffer(DefaultMaxOutput)
	for written := 0; written < total; written += len(chunk) {
		_, _ = b.Write(chunk)
	}

	runtime.GC()
	runtime.ReadMemStats(&after)
	text, truncated, cut := b.String()
	runtime.KeepAlive(b)

	assert.True(t, truncated)
	assert.Greater(t, cut, 20<<20, "most of the output was cut")
	assert.GreaterOrEqual(t, b.Total(), int64(total))
	assert.LessOrEqual(t, utf8.RuneCountInString(text), DefaultMaxOutput+100)

	// Exactly what is retained: at most four bytes a character.
	assert.LessOrEqual(t, cap(b.head)+cap(b.ring), utf8.UTFMax*(DefaultMaxOutput+1))
	// And what the runtime sees, with a generous margin for noise from
	// the test framework; holding the output would be ~50 MB.
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap growth after 50 MB: %d bytes", growth)
	assert.Less(t, growth, int64(5<<20), "heap grew by %d bytes", growth)
}

// TestOutputConcurrentWrites checks that writes from several goroutines
// (stdout and stderr copied separately) neither race nor interleave inside
// one Write.
func TestOutputConcurrentWrites(t *testing.T) {
	const goroutines, lines = 8, 500
	b := NewOutputBuffer(1 << 20)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range lines {
				_, _ = fmt.Fprintf(b, "\x1b[3%dmg%d line %d\x1b[0m\r\n", g, g, i)
			}
		})
	}
	// Readers may look while writers write.
	wg.Go(func() {
		for range 50 {
			_, _, _ = b.String()
			_ = b.Total()
		}
	})
	wg.Wait()

	got, truncated, _ := b.String()
	require.False(t, truncated)
	next := make([]int, goroutines)
	count := 0
	for line := range strings.Lines(got) {
		var g, i int
		_, err := fmt.Sscanf(line, "g%d line %d\n", &g, &i)
		require.NoError(t, err, "line %q", line)
		require.Equal(t, next[g], i, "goroutine %d's lines in order", g)
		next[g]++
		count++
	}
	assert.Equal(t, goroutines*lines, count)
}

// TestOutputMergesStdoutAndStderrInOrder is how the bash tool uses the
// buffer: one writer for both streams, so os/exec gives the child one pipe.
func TestOutputMergesStdoutAndStderrInOrder(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	b := NewOutputBuffer(0)
	cmd := exec.Command("sh", "-c", `echo out1; echo err1 >&2; printf '\033[1mout2\033[0m\r\n'; echo err2 >&2`)
	cmd.Stdout = b
	cmd.Stderr = b
	require.NoError(t, cmd.Run())
	require.NoError(t, b.Close())
	got, _, _ := b.String()
	assert.Equal(t, "out1\nerr1\nout2\nerr2\n", got)
}

func ExampleOutputBuffer() {
	b := NewOutputBuffer(44)
	// A coloured progress bar, then more output than fits.
	fmt.Fprint(b, "\x1b[32mdownloading\x1b[0m\r\n 50%\r100%\r\n")
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(b, "file%02d\n", i)
	}
	_ = b.Close()
	text, truncated, cut := b.String()
	fmt.Print(text)
	fmt.Println(truncated, cut)
	// Output:
	// downloading
	//  50%
	// 100%
	// [output truncated: 49 characters cut from the middle]
	// file08
	// file09
	// file10
	// true 49
}

// FuzzOutputBuffer feeds arbitrary bytes in arbitrary writes. splits gives
// the length of each write (the last one takes the rest).
func FuzzOutputBuffer(f *testing.F) {
	f.Add([]byte("\x1b[31mred\x1b[0m\r\n"), []byte{3, 1}, uint16(30000))
	f.Fuzz(func(t *testing.T, data, splits []byte, maxChars uint16) {
		limit := int(maxChars)%4096 + 1

		b := NewOutputBuffer(limit)
		rest := data
		for _, s := range splits {
			n := min(int(s)%17, len(rest))
			_, _ = b.Write(rest[:n])
			rest = rest[n:]
		}
		_, _ = b.Write(rest)
		_ = b.Close()
		text, truncated, cut := b.String()

		if !utf8.ValidString(text) {
			t.Fatalf("invalid UTF-8: %q", text)
		}
		for _, r := range text {
			if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
				t.Fatalf("control character %U in %q", r, text)
			}
		}
		bound := limit
		if truncated {
			bound += len(fmt.Sprintf(outputCutLine, cut, "characters")) + 2
		} else if cut != 0 {
			t.Fatalf("cut %d without truncation", cut)
		}
		if n := utf8.RuneCountInString(text); n > bound {
			t.Fatalf("%d characters, more than %d", n, bound)
		}
		if b.Total() != int64(len(data)) {
			t.Fatalf("Total %d, wrote %d", b.Total(), len(data))
		}

		// How the bytes were split must not matter.
		whole := NewOutputBuffer(limit)
		_, _ = whole.Write(data)
		_ = whole.Close()
		if want, _, _ := whole.String(); text != want {
			t.Fatalf("split writes give %q, one write gives %q", text, want)
		}
	})
}

func BenchmarkOutputBuffer(b *testing.B) {
	inputs := []struct {
		name string
		line string
	}{
		{"ascii", "2026/01/02 15:04:05 building github.com/cordonhq/cordon/tools ok\n"},
		{"colour", "\x1b[0m\x1b[01;34mdir\x1b[0m  \x1b[01;32mrun.sh\x1b[0m  \x1b[01;36mlink\x1b[0m  README.md\r\n"},
		{"utf-8", "héllo wörld — ✓ 世界 🎉 ünïcödé text in a line of output\n"},
		{"progress", "\r\x1b[K[=========>          ] 45% 12.3 MB/s eta 0:03"},
	}
	for _, in := range inputs {
		chunk := bytes.Repeat([]byte(in.line), (32<<10)/len(in.line))
		b.Run(in.name, func(b *testing.B) {
			buf := NewOutputBuffer(0)
			b.SetBytes(int64(len(chunk)))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = buf.Write(chunk)
			}
		})
	}
}
