package tools

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cordonhq/cordon/sandbox"
)

// Context lines, as grep -C shows them: a match is file:line:text, a line
// around it file-line-text, and -- stands between groups of lines that are
// not adjacent. The search finds them as it goes: the lines before a match
// from its region (or, at the region's start, from the last lines of the
// region before, kept in fileState.prev), the lines after it by reading on,
// one line at a time, where a line that matches is a match and owes its
// own context.

// beforeContext appends the context lines before the match at ls, the
// start of line number line in a region whose first line is first: up to
// s.context of them, after the last line already in the hits.
func (s *fileSearcher) beforeContext(region []byte, ls, first, line int, p string, st *fileState, hits []grepHit) []grepHit {
	from := max(line-s.context, st.last+1, 1)
	for _, h := range st.prev {
		if h.line >= from && h.line < first {
			hits = append(hits, h)
		}
	}
	from = max(from, first)
	start := ls // found backwards: the start of line number from
	for n := line - from; n > 0; n-- {
		start = bytes.LastIndexByte(region[:start-1], '\n') + 1
	}
	for no := from; no < line; no++ {
		le := start + bytes.IndexByte(region[start:], '\n')
		hits = append(hits, grepHit{path: p, line: no, text: contextText(region[start:le]), context: true})
		start = le + 1
	}
	return hits
}

// afterContext appends the lines owed after a match (st.after of them),
// from pos, the start of line number no: as context, or as a match where a
// line matches, which then owes lines of its own. It returns where it
// stopped, and whether the file's search is done (the limit reached).
func (s *fileSearcher) afterContext(region []byte, pos, no int, p string, st *fileState, hits []grepHit) (int, []grepHit, bool) {
	for ; st.after > 0 && pos < len(region); no++ {
		le := pos + bytes.IndexByte(region[pos:], '\n')
		if le < pos {
			le = len(region)
		}
		line := region[pos:le]
		pos = le + 1
		st.last = no
		// The line alone, as the search checks a match (searchRegion).
		if !s.m.re.Match(line) {
			hits = append(hits, grepHit{path: p, line: no, text: contextText(line), context: true})
			st.after--
			continue
		}
		st.matches++
		hits = append(hits, grepHit{path: p, line: no, text: matchText(line, s.m.re)})
		if st.matches >= s.limit {
			return pos, hits, true
		}
		st.after = s.context
	}
	return pos, hits, false
}

// keepTail keeps the last s.context lines up to the end of a region, for
// a match at the start of the next region to show. first is the number of
// the region's first line, next the number of the line after its last
// newline.
func (s *fileSearcher) keepTail(region []byte, p string, first, next int, st *fileState) {
	if len(region) == 0 {
		return
	}
	end, last := len(region), next // the line that ends at end, and its number
	if region[end-1] == '\n' {
		end, last = end-1, next-1
	}
	var tail []grepHit
	for _, h := range st.prev {
		if h.line > last-s.context {
			tail = append(tail, h)
		}
	}
	// The region's own last lines, found backwards, kept in order.
	n := min(s.context, last-first+1)
	at := len(tail)
	tail = append(tail, make([]grepHit, n)...)
	for i, no := n-1, last; i >= 0; i, no = i-1, no-1 {
		ls := bytes.LastIndexByte(region[:end], '\n') + 1
		tail[at+i] = grepHit{path: p, line: no, text: contextText(region[ls:end]), context: true}
		end = ls - 1
	}
	st.prev = tail
}

// contextText is a context line as shown: valid UTF-8, without its CR,
// and at most MaxMatchChars characters from its start.
func contextText(line []byte) string {
	line = bytes.TrimSuffix(line, []byte("\r"))
	// One byte more than the characters can take: a cut shows.
	if room := MaxMatchChars*utf8.UTFMax + 1; len(line) > room {
		line = line[:room]
	}
	return cutRunes(strings.ToValidUTF8(string(line), "\uFFFD"), MaxMatchChars)
}

// trimContext drops, from the hits of a search cut short by max_results,
// the context lines after the last match that are not its own: the lines
// before the first match left out.
func (g *grepRun) trimContext() {
	if g.context == 0 {
		return
	}
	last := len(g.hits) - 1
	for last >= 0 && g.hits[last].context {
		last--
	}
	if last < 0 {
		return
	}
	m, keep := g.hits[last], last+1
	for keep < len(g.hits) && g.hits[keep].path == m.path && g.hits[keep].line <= m.line+g.context {
		keep++
	}
	g.hits = g.hits[:keep]
}

// lines are the hits as the model sees them, by the output argument.
func (g *grepRun) lines(pol sandbox.ExecutionPolicy) []string {
	lines := make([]string, 0, len(g.hits))
	for i, h := range g.hits {
		name := displayPath(pol, h.path)
		switch g.output {
		case grepFiles:
			lines = append(lines, name)
			continue
		case grepCount:
			lines = append(lines, fmt.Sprintf("%s:%d", name, h.count))
			continue
		}
		if g.context > 0 && i > 0 {
			if prev := g.hits[i-1]; prev.path != h.path || prev.line+1 != h.line {
				lines = append(lines, "--")
			}
		}
		sep := ":"
		if h.context {
			sep = "-"
		}
		lines = append(lines, name+sep+fmt.Sprint(h.line)+sep+h.text)
	}
	return lines
}
