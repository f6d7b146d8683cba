package approval

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What the human reads in the approval dialog.
//
// The human approves what they read, so the dialog shows the command (or
// path, or input) exactly, and whole:
//
//   - Every character is visible. Control characters (ESC, CR, …), tabs,
//     bidi and zero-width characters, other Unicode format characters (Cf),
//     line and paragraph separators, spaces other than the ASCII space,
//     private-use and unassigned code points, invalid UTF-8, and combining
//     marks piled on one letter are shown as markers in ⟨…⟩: ⟨ESC⟩, ⟨CR⟩,
//     ⟨TAB⟩, ⟨U+202E RLO⟩, ⟨byte 0xFF⟩. A ⟨ or ⟩ in the text is itself
//     shown as ⟨U+27E8⟩ or ⟨U+27E9⟩, so every ⟨ in the dialog is cordon's
//     and none can be forged. (A backslash escape such as \x1b could not
//     be told apart from the same four characters in a printf command.)
//   - Runs are collapsed visibly, not dropped: more than 16 spaces in a
//     row show as ⟨10,000 spaces⟩, four or more of the same marker as
//     ⟨300 × LF⟩, more than two empty lines in a row as ⟨299 empty lines⟩.
//   - Nothing is cut. A text that does not fit (Fits) is not shown at all:
//     the tool layer refuses the call before anyone is asked.
//
// Ordinary text, accented letters (café), other scripts and emoji are shown
// as they are. Look-alike letters from other scripts (a Cyrillic а in
// "curl") are not marked.

// Limits of what the dialog shows whole. A human reads a dialog about as
// long as one terminal screen (80 columns by 50 lines is 4,000
// characters); what has to be scrolled to is what nobody reads. A longer
// command belongs in a script file, which the human can open before
// answering a question about one short line that runs it.
const (
	// MaxShownChars is the most characters a command, input or path may
	// take in the dialog, markers included.
	MaxShownChars = 4000
	// MaxShownLines is the most lines a command or input may take in the
	// dialog, after runs of empty lines are collapsed.
	MaxShownLines = 50
	// MaxJustificationChars is the most characters the model's
	// justification may take in the dialog: the SPEC asks for one
	// sentence, and a long one could be padded to wrap where it likes.
	MaxJustificationChars = 500
)

// Shown is a text as the approval dialog shows it.
type Shown struct {
	// Lines are the displayed lines, every character visible (markers in
	// ⟨…⟩). A text shown on one line (ShowLine) has exactly one.
	Lines []string
	// SourceLines is how many lines the original text has.
	SourceLines int
	// Chars is how many characters the displayed lines hold together.
	Chars int
}

// Fits reports whether the dialog can show the text whole: at most
// MaxShownChars characters on at most MaxShownLines lines.
func (s Shown) Fits() bool { return s.Chars <= MaxShownChars && len(s.Lines) <= MaxShownLines }

// ShowText shows a text that keeps its lines (a command, an input): each
// line escaped, more than two empty lines in a row collapsed into one
// "⟨N empty lines⟩" line.
func ShowText(s string) Shown {
	src := strings.Split(s, "\n")
	sh := Shown{SourceLines: len(src)}
	add := func(line string) {
		sh.Lines = append(sh.Lines, line)
		sh.Chars += utf8.RuneCountInString(line)
	}
	empty := 0
	flush := func() {
		if empty > maxEmptyLines {
			add(openMark + thousands(empty) + " empty lines" + closeMark)
		} else {
			for range empty {
				add("")
			}
		}
		empty = 0
	}
	for _, line := range src {
		if line == "" {
			empty++
			continue
		}
		flush()
		add(escape(line))
	}
	flush()
	return sh
}

// ShowLine shows a text on one line (a path, the model's justification,
// cordon's reason): as ShowText, with every newline a ⟨LF⟩ marker.
func ShowLine(s string) Shown {
	line := escape(s)
	return Shown{Lines: []string{line}, SourceLines: strings.Count(s, "\n") + 1, Chars: utf8.RuneCountInString(line)}
}

const (
	openMark  = "⟨"
	closeMark = "⟩"
	// maxSpaceRun is the longest run of spaces shown as it is: deep
	// indentation stays as written, the padding trick does not.
	maxSpaceRun = 16
	// minRepeat identical markers in a row are shown as one, with a count.
	minRepeat = 4
	// maxMarks is how many non-spacing combining marks one character may
	// carry as it is (é, ẫ, an emoji's variation selector); more pile up
	// over the lines around it.
	maxMarks = 3
	// maxEmptyLines empty lines in a row are shown as they are.
	maxEmptyLines = 2
)

// escape makes every character of one line visible.
func escape(s string) string {
	var b strings.Builder
	// base: the last character written as it is can carry combining
	// marks; marks: how many it carries so far.
	base, marks := false, 0
	for i := 0; i < len(s); {
		if s[i] == ' ' {
			n := run(s[i:], " ")
			if n > maxSpaceRun {
				b.WriteString(openMark + thousands(n) + " spaces" + closeMark)
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
			base = false
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		name := ""
		switch {
		case r == utf8.RuneError && size == 1:
			name = fmt.Sprintf("byte 0x%02X", s[i])
		case isCombining(r):
			if !base || marks >= maxMarks || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) {
				name = codePoint(r)
			}
		default:
			name = markerName(r)
		}
		if name == "" {
			b.WriteString(s[i : i+size])
			i += size
			if isCombining(r) {
				marks++
			} else {
				base, marks = true, 0
			}
			continue
		}
		n := run(s[i:], s[i:i+size])
		if n >= minRepeat {
			b.WriteString(openMark + thousands(n) + " × " + name + closeMark)
		} else {
			b.WriteString(strings.Repeat(openMark+name+closeMark, n))
		}
		i += n * size
		base = false
	}
	return b.String()
}

// run counts how many times unit repeats at the start of s.
func run(s, unit string) int {
	n := 0
	for strings.HasPrefix(s[n*len(unit):], unit) {
		n++
	}
	return n
}

// isCombining reports a mark drawn over the character before it.
func isCombining(r rune) bool { return unicode.In(r, unicode.Mn, unicode.Me) }

// markerName is the marker for a character that is not shown as it is,
// or "" for one that is.
func markerName(r rune) string {
	if n, ok := controlNames[r]; ok {
		return n
	}
	switch {
	case r == '⟨' || r == '⟩':
		return codePoint(r)
	case !unicode.IsGraphic(r): // Cc, Cf, Co, Cn, Zl, Zp
		return codePoint(r)
	case unicode.Is(unicode.Zs, r): // every space but the ASCII one
		return codePoint(r)
	case unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r), r == '\u2800':
		// Hangul fillers and the blank braille pattern draw nothing.
		return codePoint(r)
	}
	return ""
}

// codePoint is "U+202E RLO": the code point, and the common abbreviation
// of the characters used to hide or reorder text, or the key of a control
// character ("U+0003 Ctrl-C").
func codePoint(r rune) string {
	s := fmt.Sprintf("U+%04X", r)
	if n, ok := unicodeNames[r]; ok {
		s += " " + n
	} else if r < 0x20 {
		s += " Ctrl-" + string(rune('@'+r)) // what process_input's Ctrl-C is
	}
	return s
}

var controlNames = map[rune]string{
	0x00: "NUL", 0x07: "BEL", 0x08: "BS", '\t': "TAB", '\n': "LF", 0x0b: "VT",
	0x0c: "FF", '\r': "CR", 0x1b: "ESC", 0x7f: "DEL",
}

var unicodeNames = map[rune]string{
	0x00a0: "NBSP", 0x00ad: "SHY", 0x034f: "CGJ", 0x061c: "ALM", 0x180e: "MVS",
	0x200b: "ZWSP", 0x200c: "ZWNJ", 0x200d: "ZWJ", 0x200e: "LRM", 0x200f: "RLM",
	0x2028: "LS", 0x2029: "PS",
	0x202a: "LRE", 0x202b: "RLE", 0x202c: "PDF", 0x202d: "LRO", 0x202e: "RLO",
	0x2060: "WJ", 0x2066: "LRI", 0x2067: "RLI", 0x2068: "FSI", 0x2069: "PDI",
	0xfeff: "BOM",
}

// thousands writes n with comma separators: 10,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
