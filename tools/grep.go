package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/cordonhq/cordon/fsfence"
)

// GrepInput are the grep tool's arguments.
type GrepInput struct {
	Pattern    string `json:"pattern" jsonschema:"RE2 regular expression, or a plain string with literal."`
	Path       string `json:"path,omitempty" jsonschema:"File or directory to search. Default: the workspace."`
	Glob       string `json:"glob,omitempty" jsonschema:"Only search files whose name matches this glob, e.g. *.go."`
	IgnoreCase bool   `json:"ignore_case,omitempty" jsonschema:"Case-insensitive match."`
	Literal    bool   `json:"literal,omitempty" jsonschema:"The pattern is a plain string, not a regular expression: . ( [ * and the rest match themselves."`
	Context    int    `json:"context,omitempty" jsonschema:"Also show this many lines before and after each match, as grep -C does: such lines are file-line-text, and -- separates groups that are not adjacent. Output content only. Default 0." schema:"minimum=0,maximum=MaxGrepContext"`
	Output     string `json:"output,omitempty" jsonschema:"content (default): the matching lines, file:line:text; files: the paths of the files that match, one a line; count: file:N, the number of matching lines of each file that matches." schema:"enum=GrepOutputs"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"At most this many matches (output content, context lines not counted) or files (output files or count). Default 200." schema:"minimum=1,maximum=MaxGrepResults"`
}

// GrepOutput is the grep tool's structuredContent.
type GrepOutput struct {
	Matches   []string `json:"matches" jsonschema:"the lines of the text: file:line:text matches (with context, file-line-text lines around them and -- between groups), the paths (output files), or file:N (output count)"`
	Truncated bool     `json:"truncated"`
	Note      string   `json:"note,omitempty" jsonschema:"no matches, or the results were cut short and how to see more; as in the text"`
}

// What grep returns: its output argument.
const (
	grepContent = "content"
	grepFiles   = "files"
	grepCount   = "count"
)

// Limits of grep.
const (
	DefaultGrepResults = 200
	MaxGrepResults     = 10000
	// MaxMatchChars is where a matching line is cut in the output.
	MaxMatchChars = 500
	// MaxGrepContext is the most context lines before and after a match.
	MaxGrepContext = 10
)

// grepBuffer is the first read buffer of a file; it grows for long lines
// up to maxGrepLine, beyond which a line is searched in its first
// maxGrepLine bytes only.
const (
	grepBuffer  = 128 << 10
	maxGrepLine = 1 << 20
)

// Grep searches files for an RE2 regular expression (or, with Literal, a
// plain string) and returns `file:line:text` matches, in path order, then
// line order, with Context lines around them; or, by Output, the files
// that match or their counts of matching lines. The tree is walked through the fence (skipping .git,
// .gitignored and read-deny paths), files are searched in parallel, and
// the search stops as soon as the first max_results matches in that order
// are known.
func (tb *Toolbox) Grep(ctx context.Context, call Call, in GrepInput) (*Result, *ToolError) {
	call = tb.pin(call)
	if strings.IndexByte(in.Pattern, 0) >= 0 || strings.IndexByte(in.Glob, 0) >= 0 {
		return nil, invalid("pattern and glob must not contain a NUL byte")
	}
	if in.Pattern == "" {
		return nil, invalid("pattern is empty: give an RE2 regular expression")
	}
	maxResults := in.MaxResults
	if maxResults == 0 {
		maxResults = DefaultGrepResults
	}
	if maxResults < 1 || maxResults > MaxGrepResults {
		return nil, invalid("max_results must be between 1 and %d", MaxGrepResults)
	}
	output := in.Output
	switch output {
	case "":
		output = grepContent
	case grepContent, grepFiles, grepCount:
	default:
		return nil, invalid("output must be content, files or count, not %q", in.Output)
	}
	if in.Context < 0 || in.Context > MaxGrepContext {
		return nil, invalid("context must be between 0 and %d, not %d: it is how many lines to show before and after each match", MaxGrepContext, in.Context)
	}
	if in.Context > 0 && output != grepContent {
		return nil, invalid("context shows lines around matches, which output %s does not show: leave context out, or use output content", output)
	}
	if in.Glob != "" && !doublestar.ValidatePattern(in.Glob) {
		return nil, invalid("glob %q is not a valid glob pattern (syntax: * ? [abc] {a,b} **)", in.Glob)
	}
	pattern := in.Pattern
	if in.Literal {
		pattern = regexp.QuoteMeta(pattern)
	}
	m, terr := newLineMatcher(pattern, in.IgnoreCase)
	if terr != nil {
		return nil, terr
	}
	pol, root, f, terr := tb.reading(call, in.Path, true)
	if terr != nil {
		return nil, terr
	}
	fi, err := f.Stat(root)
	if err != nil {
		return nil, fenceError(NameGrep, pol, root, err)
	}
	g := &grepRun{fence: f, m: m, max: maxResults, output: output, context: in.Context}
	if fi.IsDir() {
		err = g.searchTree(ctx, newTreeWalk(f, pol, root), in.Glob)
	} else {
		// A file named explicitly is searched whatever its name or
		// .gitignore say.
		err = g.searchFiles(ctx, func(ctx context.Context, send func(grepJob) error) error {
			return send(grepJob{paths: []string{root}, names: []string{filepath.Base(root)}})
		})
	}
	if ctx.Err() != nil {
		return nil, errorf(CodeTimeout, "grep was cancelled")
	}
	if err != nil {
		return nil, walkRootError(NameGrep, pol, root, err)
	}
	lines := g.lines(pol)
	var note string
	if len(lines) == 0 {
		note = fmt.Sprintf("No matches for %s in %s (.git, .gitignored and binary files are skipped).", in.Pattern, displayPath(pol, root))
	}
	if g.truncated {
		what := "matches"
		if output != grepContent {
			what = "files"
		}
		note = fmt.Sprintf("[showing the first %d %s: narrow the pattern, path or glob, or raise max_results (up to %d)]", maxResults, what, MaxGrepResults)
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if note != "" {
		b.WriteString(note + "\n")
	}
	// The note goes into structuredContent too: Claude Code and Codex show
	// the model only that.
	return &Result{Text: b.String(), Structured: structured(GrepOutput{Matches: lines, Truncated: g.truncated, Note: note})}, nil
}

// lineMatcher finds the lines that match a pattern. The whole buffer is
// searched at once with (?m), so that ^ and $ match at line boundaries, and
// each hit is checked against its line alone; per-line matching, which is
// many times slower, is kept for patterns with \A or \z, whose meaning the
// buffer search would change.
//
// A literal that every match contains (required, below) is looked for
// first, with bytes.Index, and only the lines that contain it go to the
// regular expression, line by line: most of a tree has no line that does.
// When the pattern is that literal and nothing else, no regular expression
// runs at all.
type lineMatcher struct {
	re      *regexp.Regexp
	perLine bool
	// lit is a literal every matching line contains, or nil; complete is
	// true when containing lit is what matching means.
	lit      []byte
	complete bool
}

func newLineMatcher(pattern string, ignoreCase bool) (*lineMatcher, *ToolError) {
	if _, err := regexp.Compile(pattern); err != nil {
		return nil, invalid("pattern is not a valid RE2 regular expression: %v", err)
	}
	flags := "(?m)"
	if ignoreCase {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + pattern)
	if err != nil {
		return nil, invalid("pattern is not a valid RE2 regular expression: %v", err)
	}
	parsed, err := syntax.Parse(flags+pattern, syntax.Perl)
	if err != nil {
		return nil, invalid("pattern is not a valid RE2 regular expression: %v", err)
	}
	m := &lineMatcher{re: re, perLine: hasTextAnchor(parsed)}
	if !m.perLine {
		m.lit, m.complete = requiredLiteral(parsed)
	}
	return m, nil
}

func hasTextAnchor(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	for _, sub := range re.Sub {
		if hasTextAnchor(sub) {
			return true
		}
	}
	return false
}

// grepHit is one matching line, a line of context around one, or (output
// count) a file's count of matching lines.
type grepHit struct {
	path    string
	line    int
	text    string
	context bool // a line around a match, not a match
	count   int  // output count: the file's matching lines
}

// grepRun is one grep call's search state.
type grepRun struct {
	fence   *fsfence.Fence
	m       *lineMatcher
	max     int    // matches (output content) or files (files, count)
	output  string // content, files or count
	context int    // lines before and after each match

	hits      []grepHit
	matches   int // the hits that are not context
	truncated bool
}

// searchTree walks the tree and searches each kept file whose name (or,
// for a glob with a slash, whose path below the root) matches glob.
func (g *grepRun) searchTree(ctx context.Context, w treeWalk, glob string) error {
	return g.searchFiles(ctx, func(ctx context.Context, send func(grepJob) error) error {
		// Files go to the workers in batches of one directory's, which
		// costs a channel send and a wake-up a batch instead of a file.
		var batch grepJob
		flush := func() error {
			job := batch
			batch = grepJob{}
			if len(job.names) == 0 {
				job.release()
				return nil
			}
			if err := send(job); err != nil {
				job.release()
				return err
			}
			return nil
		}
		err := w.run(ctx, func(p string, d fs.DirEntry, dir *walkDir) error {
			// Symlinks are not followed (like ripgrep), nor are devices
			// and FIFOs opened.
			if !d.Type().IsRegular() {
				return nil
			}
			if glob != "" {
				name := d.Name()
				if strings.Contains(glob, "/") {
					rel, err := filepath.Rel(w.root, p)
					if err != nil {
						return nil
					}
					name = filepath.ToSlash(rel)
				}
				if !doublestar.MatchUnvalidated(glob, name) {
					return nil
				}
			}
			// The worker opens the file beneath its checked directory,
			// which the batch keeps open until then.
			if dir != batch.dir || len(batch.names) == grepBatch {
				if err := flush(); err != nil {
					return err
				}
				batch.dir = dir
				if dir != nil {
					dir.retain()
				}
			}
			batch.paths = append(batch.paths, p)
			batch.names = append(batch.names, d.Name())
			return nil
		})
		if ferr := flush(); err == nil {
			err = ferr
		}
		return err
	})
}

// grepBatch is the most files a job holds.
const grepBatch = 32

// grepJob is files to search, in order: by name in a directory of the
// walk, whose reference the job holds, or by path when dir is nil (a file
// named by the caller).
type grepJob struct {
	idx   int
	dir   *walkDir
	paths []string
	names []string
}

func (j grepJob) release() {
	if j.dir != nil {
		j.dir.release()
	}
}

type grepResult struct {
	idx  int
	hits []grepHit
}

// searchFiles searches, with one worker per CPU, the files that walk sends,
// and keeps the first max matches in the order walk sent the files. Files
// finish out of order; a match is final once every file before its own has
// finished, and the search is cancelled as soon as more than max matches
// are final. The answer does not depend on timing.
func (g *grepRun) searchFiles(ctx context.Context, walk func(context.Context, func(grepJob) error) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan grepJob, 256)
	results := make(chan grepResult, 256)

	var walkErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(jobs)
		n := 0
		walkErr = walk(ctx, func(job grepJob) error {
			job.idx = n
			select {
			case jobs <- job:
				n++
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	})
	var workers sync.WaitGroup
	for range runtime.NumCPU() {
		workers.Go(func() {
			s := newFileSearcher(g.fence, g.m, g.max+1)
			switch g.output {
			case grepFiles:
				s.limit = 1 // one match says the file matches
				s.lineless = true
			case grepCount:
				s.limit, s.count = math.MaxInt, true
			}
			s.context = g.context
			for job := range jobs {
				var hits []grepHit
				for i := range job.paths {
					if ctx.Err() != nil {
						break
					}
					hits = append(hits, s.searchJob(ctx, job, i)...)
				}
				job.release()
				results <- grepResult{idx: job.idx, hits: hits}
			}
		})
	}
	go func() {
		workers.Wait()
		close(results)
	}()

	pending := map[int][]grepHit{}
	next := 0
	for r := range results {
		pending[r.idx] = r.hits
		for {
			hits, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			for _, h := range hits {
				if g.truncated {
					break
				}
				if !h.context {
					if g.matches == g.max {
						g.truncated = true
						cancel()
						break
					}
					g.matches++
				}
				g.hits = append(g.hits, h)
			}
		}
	}
	wg.Wait()
	if g.truncated {
		g.trimContext()
		return nil // the walk was stopped on purpose
	}
	return walkErr
}

// fileSearcher searches one file at a time with a reusable buffer.
type fileSearcher struct {
	fence *fsfence.Fence
	m     *lineMatcher
	limit int // matches per file
	count bool
	// lineless: the hits' line numbers are not shown (output files), so
	// lines are not counted; count implies it.
	lineless bool
	context  int
	buf      []byte
	maxLine  int // the buffer's largest size (maxGrepLine; smaller in tests)
}

// fileState is what the search of one file carries from one region of it
// to the next.
type fileState struct {
	matches int
	// With context: the number of the last line in the hits (0 for
	// none), the lines still owed after the last match, and the last
	// context lines before the region, which a match at its start shows.
	last  int
	after int
	prev  []grepHit
}

func newFileSearcher(f *fsfence.Fence, m *lineMatcher, limit int) *fileSearcher {
	return &fileSearcher{fence: f, m: m, limit: limit, buf: make([]byte, grepBuffer), maxLine: maxGrepLine}
}

// search returns up to limit matching lines of the file at path p. A file
// the fence refuses, that vanished, or that is binary (a NUL byte in its
// first sniffSize bytes, as read_file decides) yields nothing.
func (s *fileSearcher) search(ctx context.Context, p string) []grepHit {
	file, err := s.fence.OpenFile(p)
	if err != nil {
		return nil
	}
	defer file.Close()
	return s.scan(ctx, file, -1, p)
}

// searchJob is search for the i-th file of a job of the walk: the file is
// opened beneath its directory's handle.
func (s *fileSearcher) searchJob(ctx context.Context, job grepJob, i int) []grepHit {
	if job.dir == nil {
		return s.search(ctx, job.paths[i])
	}
	var hits []grepHit
	job.dir.ReadFunc(job.names[i], func(r io.Reader, size int64) {
		hits = s.scan(ctx, r, size, job.paths[i])
	})
	return hits
}

// scan searches an open file of size bytes (-1: not known), named p in
// the hits.
func (s *fileSearcher) scan(ctx context.Context, file io.Reader, size int64, p string) []grepHit {
	var st fileState
	hits, ok := s.scanFile(ctx, file, size, p, &st)
	switch {
	case !ok:
		return nil
	case s.count && st.matches > 0:
		return []grepHit{{path: p, count: st.matches}}
	}
	return hits
}

// fill reads into buf until it is full or the file ends. The end is a read
// of nothing or, once the size the file had when it was opened has been
// read (done counts the bytes read so far), a short read: that saves the
// read that would return nothing, one per file. A size of 0 says nothing
// (procfs gives it to files that read page by page), nor does -1.
func fill(file io.Reader, buf []byte, size int64, done *int64) (n int, eof bool, err error) {
	for n < len(buf) {
		m, err := file.Read(buf[n:])
		n += m
		*done += int64(m)
		switch {
		case errors.Is(err, io.EOF) || (m == 0 && err == nil):
			return n, true, nil
		case err != nil:
			return n, false, err
		case size > 0 && *done >= size && n < len(buf):
			return n, true, nil
		}
	}
	return n, false, nil
}

// scanFile is scan's loop over the regions of the file. ok is false for a
// binary file or a cancelled search; on an I/O error, it returns what it
// found until then.
func (s *fileSearcher) scanFile(ctx context.Context, file io.Reader, size int64, p string, st *fileState) (hits []grepHit, ok bool) {
	buf := s.buf
	end := 0          // buf[:end] holds data; buf[0] starts a line
	line := 1         // the number of the line at buf[0]
	skipping := false // dropping the rest of an over-long line
	eof := false
	var done int64 // bytes read
	for !eof {
		if ctx.Err() != nil {
			return nil, false
		}
		var n int
		var err error
		n, eof, err = fill(file, buf[end:], size, &done)
		if err != nil {
			return hits, true // an I/O error: keep what was found
		}
		// Binary as read_file decides it: a NUL in the first sniffSize
		// bytes. Looking further cost a pass over every byte of the tree.
		if from := done - int64(n); from < sniffSize && bytes.IndexByte(buf[end:end+min(n, int(sniffSize-from))], 0) >= 0 {
			return nil, false // binary
		}
		end += n
		if skipping {
			i := bytes.IndexByte(buf[:end], '\n')
			if i < 0 {
				end = 0
				continue
			}
			skipping = false
			line++
			end = copy(buf, buf[i+1:end])
		}
		lim := end
		if !eof {
			lim = bytes.LastIndexByte(buf[:end], '\n') + 1
			if lim == 0 {
				if end < len(buf) {
					continue // the tail of a skipped line left room: fill it
				}
				// One line fills the buffer: grow it, or search the line's
				// head and drop the rest.
				if len(buf) < s.maxLine {
					buf = append(buf, make([]byte, min(len(buf), s.maxLine-len(buf)))...)
					s.buf = buf
					continue
				}
				lim, skipping = end, true
			}
		}
		var done bool
		hits, done = s.searchRegion(buf[:lim], p, line, st, hits)
		if done {
			return hits, true
		}
		next := line
		if !s.count && !s.lineless {
			next += bytes.Count(buf[:lim], []byte{'\n'})
		}
		if s.context > 0 {
			s.keepTail(buf[:lim], p, line, next, st)
		}
		line = next
		end = copy(buf, buf[lim:end])
	}
	return hits, true
}

// searchRegion finds the matching lines of a region that starts at a line
// start, with the context lines around them; first is that line's number.
// It reports whether the file's search is done (the limit reached).
func (s *fileSearcher) searchRegion(region []byte, p string, first int, st *fileState, hits []grepHit) ([]grepHit, bool) {
	line, counted := first, 0
	pos := 0
	if st.after > 0 {
		// The context owed by a match in the region before.
		var done bool
		if pos, hits, done = s.afterContext(region, 0, first, p, st, hits); done {
			return hits, true
		}
		line, counted = first+bytes.Count(region[:min(pos, len(region))], []byte{'\n'}), min(pos, len(region))
	}
	for pos < len(region) {
		ls, le, ok := s.m.nextLine(region, pos)
		if !ok {
			break
		}
		if !s.count && !s.lineless {
			line += bytes.Count(region[counted:ls], []byte{'\n'})
			counted = ls
		}
		st.matches++
		if s.count {
			pos = le + 1
			continue
		}
		if s.context > 0 {
			hits = s.beforeContext(region, ls, first, line, p, st, hits)
			st.last, st.after = line, s.context
		}
		hits = append(hits, grepHit{path: p, line: line, text: matchText(region[ls:le], s.m.re)})
		if st.matches >= s.limit {
			return hits, true
		}
		pos = le + 1
		if st.after > 0 {
			var done bool
			start := pos
			if pos, hits, done = s.afterContext(region, pos, line+1, p, st, hits); done {
				return hits, true
			}
			line += 1 + bytes.Count(region[min(start, len(region)):min(pos, len(region))], []byte{'\n'})
			counted = min(pos, len(region))
		}
	}
	return hits, false
}

// matchText is a matching line as shown: valid UTF-8, without its CR,
// and at most MaxMatchChars characters, around the match when the line is
// longer.
func matchText(line []byte, re *regexp.Regexp) string {
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) <= MaxMatchChars {
		return strings.ToValidUTF8(string(line), "\uFFFD")
	}
	from := 0
	if loc := re.FindIndex(line); loc != nil && loc[0] > MaxMatchChars/5 {
		from = loc[0] - MaxMatchChars/5
	}
	text := strings.ToValidUTF8(string(line[from:min(len(line), from+MaxMatchChars*4)]), "\uFFFD")
	if from > 0 {
		text = "…" + strings.TrimLeft(text, "\uFFFD")
	}
	return cutRunes(text, MaxMatchChars)
}
