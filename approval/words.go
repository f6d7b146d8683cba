package approval

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// dynMark stands in a field's text for a part that only exists at run time
// ($x, $(cmd), $((1+1))). Shell strings cannot hold a NUL byte, so it never
// collides with real text.
const dynMark = "\x00"

// field is one argument as the command will receive it: quotes removed,
// escapes resolved, brace expansion done. Parts known only at run time are
// kept as dynMark, so that "$HOME/bin/tool" still has a known base name.
type field struct {
	raw string
	// glob is set when an unquoted pattern character (*, ?, [...], an
	// extended glob) could make the shell replace the word with file names.
	glob bool
	// word is the source word, searched for substitutions that download.
	word *syntax.Word
}

// static reports whether the field's text is fully known before the command
// runs.
func (f field) static() bool { return !strings.Contains(f.raw, dynMark) }

// text is the field's value with run-time parts left out.
func (f field) text() string { return strings.ReplaceAll(f.raw, dynMark, "") }

// Limits on brace expansion: {a,b}{c,d}... multiplies, and a command line
// must not cost more to inspect than a generous real one.
const (
	maxFields     = 4096
	maxFieldBytes = 4 << 20
)

// fields turns a simple command's words into the argument vector the
// command receives. ok is false when brace expansion would produce more
// than the limits allow; the caller fails closed.
func fields(words []*syntax.Word) (out []field, ok bool) {
	total := 0
	add := func(f field) bool {
		out = append(out, f)
		total += len(f.raw)
		return len(out) <= maxFields && total <= maxFieldBytes
	}
	for _, w := range words {
		// SplitBraces rewrites the word it is given; work on a copy so the
		// tree keeps its source positions for other passes.
		split := &syntax.Word{Parts: slices.Clone(w.Parts)}
		if !syntax.SplitBraces(split) {
			if !add(resolve(w)) {
				return out, false
			}
			continue
		}
		for ew, err := range expand.BracesSeq(nil, split) {
			if err != nil {
				return out, false
			}
			f := resolve(ew)
			f.word = w
			if !add(f) {
				return out, false
			}
		}
	}
	return out, true
}

// resolve performs quote removal on one word, as the shell does before it
// runs the command: r”m, \rm, "rm" and 'rm' are all rm.
func resolve(w *syntax.Word) field {
	f := field{word: w}
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if unescapeUnquoted(&b, p.Value) {
				f.glob = true
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if lit, ok := q.(*syntax.Lit); ok {
					unescapeDouble(&b, lit.Value)
				} else {
					b.WriteString(dynMark)
				}
			}
		case *syntax.ExtGlob:
			f.glob = true
			b.WriteString(dynMark)
		default:
			// Parameter, command, arithmetic and process substitution, and
			// any brace expansion left unexpanded.
			b.WriteString(dynMark)
		}
	}
	f.raw = b.String()
	return f
}

// unescapeUnquoted writes an unquoted literal without its backslashes, and
// reports whether it holds a pattern character the shell would expand.
func unescapeUnquoted(b *strings.Builder, s string) (glob bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 == len(s) {
				b.WriteByte(c)
				continue
			}
			i++
			if s[i] != '\n' { // backslash-newline joins lines
				b.WriteByte(s[i])
			}
			continue
		case '*', '?':
			glob = true
		case '[':
			// A lone [ is literal (the test command); [...] is a pattern.
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				glob = true
			}
		}
		b.WriteByte(c)
	}
	return glob
}

// unescapeDouble writes a literal from inside double quotes, where a
// backslash only escapes $ ` " \ and newline.
func unescapeDouble(b *strings.Builder, s string) { unescapeBackslash(b, s, "$`\"\\") }

// unescapeHeredoc resolves a here-document body whose delimiter was not
// quoted, where a backslash only escapes $ ` \ and newline.
func unescapeHeredoc(s string) string {
	var b strings.Builder
	unescapeBackslash(&b, s, "$`\\")
	return b.String()
}

// unescapeBackslash writes s with each backslash before one of escaped
// dropped, and each backslash-newline (a line continuation) removed.
func unescapeBackslash(b *strings.Builder, s, escaped string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			switch next := s[i+1]; {
			case strings.IndexByte(escaped, next) >= 0:
				i++
				b.WriteByte(next)
				continue
			case next == '\n':
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
}

// ansiC decodes the body of a $'...' string as bash does. A NUL ends the
// string, as it does in bash, which also keeps dynMark out of the result.
func ansiC(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			if c == 0 {
				break
			}
			b.WriteByte(c)
			continue
		}
		i++
		c = s[i]
		var r rune = -1
		switch c {
		case 'a':
			r = '\a'
		case 'b':
			r = '\b'
		case 'e', 'E':
			r = 0x1b
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'v':
			r = '\v'
		case '\\', '\'', '"', '?':
			r = rune(c)
		case 'x', 'u', 'U':
			width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			n := digits(s[i+1:], width, 16)
			if n == 0 {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			v, _ := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			i += n
			if c == 'x' {
				if v == 0 {
					return b.String()
				}
				b.WriteByte(byte(v))
				continue
			}
			r = rune(v)
			if r == 0 {
				return b.String()
			}
			if !utf8.ValidRune(r) {
				r = utf8.RuneError
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n := digits(s[i:], 3, 8)
			v, _ := strconv.ParseUint(s[i:i+n], 8, 32)
			i += n - 1
			if byte(v) == 0 {
				return b.String()
			}
			b.WriteByte(byte(v))
			continue
		case 'c':
			if i+1 < len(s) {
				i++
				v := s[i] & 0x1f
				if v == 0 {
					return b.String()
				}
				b.WriteByte(v)
				continue
			}
		}
		if r < 0 {
			b.WriteByte('\\')
			b.WriteByte(c)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// digits counts the leading digits of s in base, at most max.
func digits(s string, max, base int) int {
	n := 0
	for n < len(s) && n < max {
		c := s[n]
		ok := c >= '0' && c <= '7' ||
			base >= 10 && c >= '8' && c <= '9' ||
			base == 16 && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')
		if !ok {
			break
		}
		n++
	}
	return n
}

// commandName is the name a rule sees: the base name after quote removal,
// lower case. ok is false when the name is only known at run time ($RM,
// $(which rm), /bin/r?): then nobody can say which program runs.
func commandName(f field) (name string, ok bool) {
	if f.glob {
		return "", false
	}
	base := f.raw[strings.LastIndexByte(f.raw, '/')+1:]
	if strings.Contains(base, dynMark) {
		return "", false
	}
	return strings.ToLower(base), true
}
