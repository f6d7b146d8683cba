package approval_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/cordonhq/cordon/approval"
	"github.com/stretchr/testify/assert"
)

func TestShowLine(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "ls -la", "ls -la"},
		{"accents and other scripts", "echo café ñandú 日本語 Ελληνικά", "echo café ñandú 日本語 Ελληνικά"},
		{"decomposed accent", "cafe\u0301", "cafe\u0301"},
		{"emoji with variation selector", "echo \u2764\ufe0f", "echo \u2764\ufe0f"},
		{"escape sequences", "echo \x1b[2K\x1b[8mhidden", "echo ⟨ESC⟩[2K⟨ESC⟩[8mhidden"},
		{"carriage return", "ls\rrm -rf ~", "ls⟨CR⟩rm -rf ~"},
		{"tab", "a\tb", "a⟨TAB⟩b"},
		{"newline on one line", "a\nb", "a⟨LF⟩b"},
		{"many newlines", "a" + strings.Repeat("\n", 300) + "b", "a⟨300 × LF⟩b"},
		{"three newlines", "a\n\n\nb", "a⟨LF⟩⟨LF⟩⟨LF⟩b"},
		{"right-to-left override", "echo \u202egnp.exe", "echo ⟨U+202E RLO⟩gnp.exe"},
		{"zero-width", "r\u200bm -rf /", "r⟨U+200B ZWSP⟩m -rf /"},
		{"bom and word joiner", "\ufeffls\u2060", "⟨U+FEFF BOM⟩ls⟨U+2060 WJ⟩"},
		{"line and paragraph separators", "a\u2028b\u2029c", "a⟨U+2028 LS⟩b⟨U+2029 PS⟩c"},
		{"no-break space", "ls\u00a0/", "ls⟨U+00A0 NBSP⟩/"},
		{"ideographic space", "ls\u3000/", "ls⟨U+3000⟩/"},
		{"soft hyphen", "r\u00adm", "r⟨U+00AD SHY⟩m"},
		{"tag characters", "ls\U000E0041", "ls⟨U+E0041⟩"},
		{"C1 control", "a\u009b2Jb", "a⟨U+009B⟩2Jb"},
		{"delete and nul", "a\x7f\x00b", "a⟨DEL⟩⟨NUL⟩b"},
		{"ctrl-c", "\x03", "⟨U+0003 Ctrl-C⟩"},
		{"hangul filler", "a\u3164b", "a⟨U+3164⟩b"},
		{"braille blank", "a\u2800b", "a⟨U+2800⟩b"},
		{"private use", "a\ue000b", "a⟨U+E000⟩b"},
		{"invalid utf-8", "a\xffb", "a⟨byte 0xFF⟩b"},
		{"brackets are cordon's", "echo ⟨ESC⟩", "echo ⟨U+27E8⟩ESC⟨U+27E9⟩"},
		{"sixteen spaces stay", "a" + strings.Repeat(" ", 16) + "b", "a" + strings.Repeat(" ", 16) + "b"},
		{"seventeen spaces collapse", "a" + strings.Repeat(" ", 17) + "b", "a⟨17 spaces⟩b"},
		{"the padding trick", "ls" + strings.Repeat(" ", 10000) + "; touch W/CANARY", "ls⟨10,000 spaces⟩; touch W/CANARY"},
		{"repeated markers", strings.Repeat("\x1b", 5), "⟨5 × ESC⟩"},
		{"zalgo", "a" + strings.Repeat("\u0301", 7), "a\u0301\u0301\u0301⟨4 × U+0301⟩"},
		{"mark without a base", " \u0301x", " ⟨U+0301⟩x"},
		{"grapheme joiner", "a\u034fb", "a⟨U+034F CGJ⟩b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := approval.ShowLine(c.in)
			assert.Equal(t, []string{c.want}, got.Lines)
			assert.Equal(t, len([]rune(c.want)), got.Chars)
		})
	}
}

func TestShowText(t *testing.T) {
	got := approval.ShowText("cat <<'EOF' > x\n\tindented\n\nEOF")
	assert.Equal(t, []string{"cat <<'EOF' > x", "⟨TAB⟩indented", "", "EOF"}, got.Lines)
	assert.Equal(t, 4, got.SourceLines)

	got = approval.ShowText("ls" + strings.Repeat("\n", 300) + "touch W/CANARY")
	assert.Equal(t, []string{"ls", "⟨299 empty lines⟩", "touch W/CANARY"}, got.Lines)
	assert.Equal(t, 301, got.SourceLines)
	assert.True(t, got.Fits())

	got = approval.ShowText("a\n\n\nb\n")
	assert.Equal(t, []string{"a", "", "", "b", ""}, got.Lines, "two empty lines stay")
}

func TestShownFits(t *testing.T) {
	assert.True(t, approval.ShowText(strings.Repeat("x", approval.MaxShownChars)).Fits())
	assert.False(t, approval.ShowText(strings.Repeat("x", approval.MaxShownChars+1)).Fits())
	// Markers count as what they show.
	assert.False(t, approval.ShowText(strings.Repeat("a\x1b", approval.MaxShownChars/5)).Fits())
	assert.True(t, approval.ShowText(strings.Repeat("echo\n", approval.MaxShownLines-1)+"echo").Fits())
	assert.False(t, approval.ShowText(strings.Repeat("echo\n", approval.MaxShownLines)+"echo").Fits())
	// Ten thousand spaces are one marker, so the padded command fits and
	// the human sees the whole of it.
	assert.True(t, approval.ShowText("ls"+strings.Repeat(" ", 10000)+"; touch W/CANARY").Fits())
}

// FuzzShow: whatever the text, every character that reaches the dialog is
// drawn (a letter, mark, number, punctuation, symbol or the ASCII space),
// no line breaks inside a shown line, and nothing piles up unbounded.
func FuzzShow(f *testing.F) {
	for _, seed := range []string{
		"ls -la", "ls" + strings.Repeat(" ", 100) + "; touch x", "\x1b[8mhidden\x1b[0m\rok",
		"echo \u202etxt.exe", "a\u200b\u200d\ufeff", "cat <<EOF\n\tx\nEOF", "café", "a\xff\xfe", "⟨ESC⟩",
		"a" + strings.Repeat("\u0301", 50), "\u2028\u2029\u0085",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, sh := range []approval.Shown{approval.ShowLine(s), approval.ShowText(s)} {
			chars := 0
			for _, line := range sh.Lines {
				chars += len([]rune(line))
				marks := 0
				for _, r := range line {
					switch {
					case r == ' ':
					case !unicode.IsGraphic(r), unicode.Is(unicode.Zs, r), unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r):
						t.Fatalf("show %q: %U reaches the dialog in %q", s, r, line)
					}
					if unicode.In(r, unicode.Mn, unicode.Me) {
						if marks++; marks > 3 {
							t.Fatalf("show %q: marks pile up in %q", s, line)
						}
					} else {
						marks = 0
					}
				}
			}
			if chars != sh.Chars {
				t.Fatalf("show %q: Chars %d, lines hold %d", s, sh.Chars, chars)
			}
		}
		if n := len(approval.ShowLine(s).Lines); n != 1 {
			t.Fatalf("ShowLine(%q) has %d lines", s, n)
		}
	})
}
