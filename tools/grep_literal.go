package tools

import (
	"bytes"
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// requiredLiteral is the longest literal that every match of re contains,
// as found in its top-level sequence (`func \(\w+ \*\w+\) Close\(` gives
// ") Close("), and whether re is that literal and nothing else. None is
// given for case-folded literals, nor for one with a newline (no line
// alone holds it) or with U+FFFD (which the regexp also matches for an
// invalid byte, and bytes.Index would not).
func requiredLiteral(re *syntax.Regexp) (lit []byte, complete bool) {
	re = unwrapCaptures(re)
	var subs []*syntax.Regexp
	switch re.Op {
	case syntax.OpLiteral:
		subs = []*syntax.Regexp{re}
	case syntax.OpConcat:
		subs = re.Sub
	default:
		return nil, false
	}
	var best []rune
	for _, sub := range subs {
		sub = unwrapCaptures(sub)
		if sub.Op != syntax.OpLiteral || sub.Flags&syntax.FoldCase != 0 {
			continue
		}
		if slices.Contains(sub.Rune, '\n') || slices.Contains(sub.Rune, utf8.RuneError) {
			continue
		}
		if len(sub.Rune) > len(best) {
			best = sub.Rune
		}
	}
	if len(best) == 0 {
		return nil, false
	}
	return []byte(string(best)), re.Op == syntax.OpLiteral
}

// unwrapCaptures is re without the capture groups around it, which do not
// change what it matches.
func unwrapCaptures(re *syntax.Regexp) *syntax.Regexp {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	return re
}

// nextLine finds the first line at or after pos (a line's start) that
// matches, and returns its start and end (its newline, or the region's
// end). A line matches when the pattern matches the line alone.
func (m *lineMatcher) nextLine(region []byte, pos int) (ls, le int, ok bool) {
	for pos < len(region) {
		switch {
		case m.perLine:
			ls, le = pos, lineEnd(region, pos)
			if m.re.Match(region[ls:le]) {
				return ls, le, true
			}
		case m.lit != nil:
			i := bytes.Index(region[pos:], m.lit)
			if i < 0 {
				return 0, 0, false
			}
			start := pos + i
			ls = pos + bytes.LastIndexByte(region[pos:start], '\n') + 1
			le = lineEnd(region, start)
			if m.complete || m.re.Match(region[ls:le]) {
				return ls, le, true
			}
		default:
			loc := m.re.FindIndex(region[pos:])
			if loc == nil {
				return 0, 0, false
			}
			start := pos + loc[0]
			ls = pos + bytes.LastIndexByte(region[pos:start], '\n') + 1
			if ls == len(region) {
				return 0, 0, false // an empty match after the last newline: no line there
			}
			le = lineEnd(region, start)
			// A match that runs over the end of its line (\s, [^x] match
			// newlines) counts only if the line matches on its own.
			if pos+loc[1] <= le || m.re.Match(region[ls:le]) {
				return ls, le, true
			}
		}
		pos = le + 1
	}
	return 0, 0, false
}

// lineEnd is the index of the newline that ends the line around i, or
// len(region) for a last line without one.
func lineEnd(region []byte, i int) int {
	if j := bytes.IndexByte(region[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(region)
}
