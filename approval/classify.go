package approval

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Finding is one reason a command line is dangerous.
type Finding struct {
	// Command is the offending part of the command line, for display: one
	// simple command, pipeline or statement, possibly from inside a nested
	// script (bash -c '...'), on one line and shortened when long.
	Command string
	// Reason says what makes it dangerous: "recursive delete".
	Reason string
}

// String is "COMMAND (REASON)", as the human reads it.
func (f Finding) String() string { return f.Command + " (" + f.Reason + ")" }

// Verdict is what Classify found in one command line.
type Verdict struct {
	// Findings lists the dangerous parts, in source order, at most
	// MaxFindings of them; empty when the command is not dangerous.
	Findings []Finding
	// More counts the findings left out beyond MaxFindings, so that a
	// script of ten thousand deletes makes a readable question, not a
	// ten-thousand-line one.
	More int
}

// Dangerous reports whether anything in the command line is dangerous.
func (v Verdict) Dangerous() bool { return len(v.Findings) > 0 }

// Summary is one line for the human: "dangerous command: rm -rf x
// (recursive delete)", or "" when nothing was found.
func (v Verdict) Summary() string {
	switch len(v.Findings) {
	case 0:
		return ""
	case 1:
		if v.More == 0 {
			return "dangerous command: " + v.Findings[0].String()
		}
	}
	parts := make([]string, len(v.Findings))
	for i, f := range v.Findings {
		parts[i] = f.String()
	}
	s := "dangerous commands: " + strings.Join(parts, "; ")
	if v.More > 0 {
		s += fmt.Sprintf("; and %d more", v.More)
	}
	return s
}

// Limits that keep inspection cheap and the parser's recursion shallow. A
// command line beyond them is dangerous: it cannot be inspected.
const (
	// MaxCommandBytes is the longest command line Classify inspects.
	MaxCommandBytes = 1 << 20
	// MaxFindings is the most findings a Verdict lists.
	MaxFindings = 20
	// maxNesting is how many scripts deep (bash -c 'eval "sh -c ..."')
	// Classify follows.
	maxNesting = 8
	// maxParens bounds ( nesting before parsing: the parser backtracks on
	// (( and is slow on thousands of them.
	maxParens = 512
	// maxWrappers bounds a chain like nohup env sudo nice timeout 5 ...
	maxWrappers = 32
	// maxDisplay is how much of an offending command a Finding shows.
	maxDisplay = 160
)

// Reasons for the built-in checks, which are not Rules: they are about how
// a command line is built, not which program it names.
const (
	reasonUnparsable    = "could not parse"
	reasonTooLong       = "too long to inspect"
	reasonTooDeep       = "nested too deeply to inspect"
	reasonDynamicName   = "command name is only known at run time"
	reasonDynamicScript = "runs a script that is only known at run time"
	reasonDownload      = "runs code downloaded from the network"
	reasonBraces        = "brace expansion too large to inspect"
	reasonInternal      = "internal error while inspecting"

	// Where the command line hides what runs (hidden.go).
	reasonFunction       = "defines a function, which runs in place of a command"
	reasonAlias          = "defines an alias, which runs in place of a command"
	reasonSubcommand     = "subcommand is only known at run time"
	reasonRunTimeArgs    = "runs a command whose arguments are only known at run time"
	reasonStdinProgram   = "runs a program read from its input"
	reasonWrittenFile    = "runs a file that the command line also writes or names"
	reasonDynamicEnv     = "sets a variable whose name is only known at run time"
	reasonDynamicGitConf = "sets git config that is only known at run time"
	reasonCommandPath    = "maps a command name to another program"
	reasonLoadsBuiltin   = "loads a shell builtin from a file"
)

// Classify reports what is dangerous in command, a bash command line, by
// rules and the built-in checks (rules.md lists both).
//
// The command is parsed with a bash parser and every simple command in it is
// checked: each stage of a pipeline, both sides of && || and ;, subshells,
// blocks, if/while/for/case bodies, function bodies, command and process
// substitutions, here-document bodies fed to a shell, the command behind a
// wrapper (sudo, env, nohup, time, nice, timeout, xargs, find -exec, ...),
// and scripts given to bash -c, sh -c, zsh -c, eval, su -c and their kin,
// parsed in turn up to a depth limit.
//
// It fails closed: a command line that does not parse, a command whose name
// is only known at run time ($RM -rf x), a nested script that is only known
// at run time (bash -c "$x"), or one beyond the size and depth limits is
// dangerous, and so is every command line that hides what it runs in
// another way (hidden.go), so that under ask-dangerous the human decides.
func (rs Rules) Classify(command string) (v Verdict) {
	c := &classifier{
		rules: rs,
		seen:  map[Finding]bool{},
		memo:  map[*syntax.CallExpr]info{},
		piped: map[*syntax.BinaryCmd]bool{},
		fed:   map[*syntax.CallExpr]bool{},
		words: map[string]int{},
	}
	defer func() {
		// Bad input must never take the server down; and a command that
		// could not be inspected is dangerous, like one that did not parse.
		if recover() != nil {
			v = Verdict{Findings: []Finding{{Command: display(command), Reason: reasonInternal}}}
		}
	}()
	c.script(command, syntax.LangBash, 0)
	c.writtenFiles()
	return Verdict{Findings: c.findings, More: c.more}
}

// classifier holds the state of one Classify call.
type classifier struct {
	rules    Rules
	findings []Finding
	more     int // findings beyond MaxFindings
	seen     map[Finding]bool
	// memo holds what is known about each simple command, so that passes
	// that need it again (pipelines, here-documents) neither re-inspect it
	// nor report it twice.
	memo map[*syntax.CallExpr]info
	// piped marks pipelines already checked as part of a longer one.
	piped map[*syntax.BinaryCmd]bool
	// fed marks programs already reported for running a download piped
	// into them.
	fed map[*syntax.CallExpr]bool
	// words counts the base names of the static words of the whole command
	// line, nested scripts included, so that a file it runs can be matched
	// against the files it writes (hidden.go).
	words map[string]int
	// ran lists the files the command line runs as programs or scripts.
	ran []ranFile
	// dynamicWrite: some redirection writes to a path only known at run
	// time, which may be any file the command line runs.
	dynamicWrite bool
}

// info is what a pipeline or redirection needs to know about a simple
// command beyond its own findings.
type info struct {
	// downloads: it fetches from the network onto its output (curl, wget).
	downloads bool
	// readsStdin: it runs a program read from standard input (sh, bash -s,
	// python with no script).
	readsStdin bool
	// wantsCode: it runs program text that should have been an argument but
	// is missing (sh -c with no script); xargs would supply it from stdin.
	wantsCode bool
	// shell: what reads standard input is a shell, in dialect lang, so a
	// here-document fed to it can be parsed and inspected.
	shell bool
	lang  syntax.LangVariant
}

// scope is one script being inspected: the top-level command line or a
// nested one.
type scope struct {
	src   string
	lang  syntax.LangVariant
	depth int
}

// text is the source of n, for display.
func (sc scope) text(n syntax.Node) string {
	start, end := n.Pos().Offset(), n.End().Offset()
	if !n.Pos().IsValid() || !n.End().IsValid() || start > end || end > uint(len(sc.src)) {
		return display(sc.src)
	}
	return display(sc.src[start:end])
}

// add records a finding once.
func (c *classifier) add(command, reason string) {
	f := Finding{Command: display(command), Reason: reason}
	if c.seen[f] {
		return
	}
	c.seen[f] = true
	if len(c.findings) == MaxFindings {
		c.more++
		return
	}
	c.findings = append(c.findings, f)
}

// display shortens a command to one line of at most maxDisplay bytes.
func display(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, dynMark, ""))
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " ")
	if len(s) <= maxDisplay {
		return s
	}
	cut := maxDisplay
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// script parses src and inspects everything in it.
func (c *classifier) script(src string, lang syntax.LangVariant, depth int) {
	switch {
	case depth > maxNesting:
		c.add(src, reasonTooDeep)
		return
	case len(src) > MaxCommandBytes:
		c.add(src, fmt.Sprintf("%s (%d bytes, limit %d)", reasonTooLong, len(src), MaxCommandBytes))
		return
	case parenDepth(src) > maxParens:
		c.add(src, reasonTooDeep)
		return
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(src), "")
	if err != nil {
		c.add(src, reasonUnparsable+": "+err.Error())
		return
	}
	sc := scope{src: src, lang: lang, depth: depth}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			c.call(sc, n)
		case *syntax.Stmt:
			c.stmt(sc, n)
		case *syntax.BinaryCmd:
			if isPipe(n) && !c.piped[n] {
				c.pipeline(sc, n)
			}
		case *syntax.FuncDecl:
			c.add(sc.text(n), reasonFunction)
		case *syntax.Assign:
			c.assign(sc, n)
		}
		return true
	})
}

// parenDepth is the deepest nesting of parentheses in s, counting those in
// quotes too: an over-estimate is fine, it only guards the parser.
func parenDepth(s string) int {
	depth, deepest := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
			deepest = max(deepest, depth)
		case ')':
			depth = max(depth-1, 0)
		}
	}
	return deepest
}

// call inspects one simple command, once.
func (c *classifier) call(sc scope, ce *syntax.CallExpr) info {
	if inf, ok := c.memo[ce]; ok {
		return inf
	}
	c.memo[ce] = info{} // nothing below can reach ce again, but be sure
	if len(ce.Args) == 0 {
		return info{} // only assignments; their substitutions are walked
	}
	text := sc.text(ce)
	argv, ok := fields(ce.Args)
	if !ok {
		c.add(text, reasonBraces)
	}
	for _, f := range argv {
		c.noteWord(f)
	}
	inf := c.command(sc, text, argv, 0)
	c.memo[ce] = inf
	return inf
}

// command inspects one argument vector: a simple command, or the command
// behind a wrapper (hops counts the wrappers passed).
func (c *classifier) command(sc scope, text string, argv []field, hops int) info {
	if len(argv) == 0 {
		return info{}
	}
	if hops > maxWrappers {
		c.add(text, reasonTooDeep)
		return info{}
	}
	name, ok := commandName(argv[0])
	if !ok {
		c.add(text, reasonDynamicName)
		return info{}
	}
	args := argv[1:]
	unknownSub := false
	for i := range c.rules {
		switch {
		case c.rules[i].match(name, args):
			c.add(text, c.rules[i].Reason)
		case matchAny(c.rules[i].Command, name) && unknownSubcommand(args, c.rules[i].Subcommand):
			unknownSub = true
		}
	}
	if unknownSub {
		c.add(text, reasonSubcommand)
	}
	if strings.Contains(argv[0].raw, "/") {
		c.runs(text, argv[0])
	}
	return c.special(sc, text, name, args, hops)
}

// stmt checks a statement's redirections (writes to block devices, and
// the files it writes) and what a program that runs its standard input is
// fed: a here-document or here-string fed to a shell is inspected; any
// other input (a pipe, a file, the caller's input) cannot be.
func (c *classifier) stmt(sc scope, st *syntax.Stmt) {
	text := sc.stmtText(st)
	var input *syntax.Redirect // the last redirection of standard input wins
	for _, r := range st.Redirs {
		if writes(r) {
			c.noteWrite(r)
			if dev, ok := deviceTarget(r); ok {
				c.add(text, "writes to device "+dev)
			}
		}
		if readsInput(r) {
			input = r
		}
	}
	ce, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		return
	}
	inf := c.call(sc, ce)
	if !inf.readsStdin || c.fed[ce] {
		return
	}
	switch {
	case input != nil && inf.shell && (input.Op == syntax.Hdoc || input.Op == syntax.DashHdoc):
		c.heredoc(sc, text, input, inf.lang)
	case input != nil && inf.shell && input.Op == syntax.WordHdoc:
		c.nested(sc, text, resolve(input.Word), inf.lang)
	case input != nil && input.Op == syntax.RdrIn && c.downloadsIn(sc, input.Word):
		c.add(text, reasonDownload)
	default:
		c.add(text, reasonStdinProgram)
	}
}

// readsInput reports whether r redirects standard input.
func readsInput(r *syntax.Redirect) bool {
	if r.N != nil && r.N.Value != "0" {
		return false
	}
	switch r.Op {
	case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return true
	}
	return false
}

// stmtText is a statement's source without its trailing ; or &.
func (sc scope) stmtText(st *syntax.Stmt) string {
	end := st.Pos()
	if st.Cmd != nil {
		end = st.Cmd.End()
	}
	for _, r := range st.Redirs {
		if r.Word != nil && r.Word.End().After(end) {
			end = r.Word.End()
		}
	}
	start := st.Pos().Offset()
	if !st.Pos().IsValid() || !end.IsValid() || start > end.Offset() || end.Offset() > uint(len(sc.src)) {
		return display(sc.src)
	}
	return display(sc.src[start:end.Offset()])
}

// heredoc inspects a here-document that a shell reads as its program.
func (c *classifier) heredoc(sc scope, text string, r *syntax.Redirect, lang syntax.LangVariant) {
	if r.Hdoc == nil {
		return
	}
	var body strings.Builder
	for _, part := range r.Hdoc.Parts {
		lit, ok := part.(*syntax.Lit)
		if !ok {
			// $x or $(cmd) in the body: the script is only known at run time.
			if c.downloadsIn(sc, r.Hdoc) {
				c.add(text, reasonDownload)
			} else {
				c.add(text, reasonDynamicScript)
			}
			return
		}
		body.WriteString(lit.Value)
	}
	src := body.String()
	if !quotedDelimiter(r.Word) {
		src = unescapeHeredoc(src)
	}
	c.script(src, lang, sc.depth+1)
}

// quotedDelimiter reports whether a here-document's delimiter was quoted
// (<<'EOF', <<"EOF", <<\EOF), which makes the body literal.
func quotedDelimiter(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				return true
			}
		}
	}
	return false
}

// nested inspects program text given to a shell (bash -c CODE, eval, su -c).
func (c *classifier) nested(sc scope, text string, code field, lang syntax.LangVariant) {
	if code.static() {
		c.script(code.text(), lang, sc.depth+1)
		return
	}
	if code.word != nil && c.downloadsIn(sc, code.word) {
		c.add(text, reasonDownload)
		return
	}
	c.add(text, reasonDynamicScript)
}

// downloadsIn reports whether w holds a command or process substitution
// that downloads: bash <(curl ...), sh -c "$(wget -O- ...)".
func (c *classifier) downloadsIn(sc scope, w *syntax.Word) bool {
	if w == nil {
		return false
	}
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		if found {
			return false
		}
		if ce, ok := n.(*syntax.CallExpr); ok && c.call(sc, ce).downloads {
			found = true
		}
		return !found
	})
	return found
}

func isPipe(b *syntax.BinaryCmd) bool {
	return b.Op == syntax.Pipe || b.Op == syntax.PipeAll
}

// pipeline finds a download piped into a program that runs its input:
// curl ... | sh, wget -O- ... | sudo bash, curl ... | tee x | python3.
func (c *classifier) pipeline(sc scope, b *syntax.BinaryCmd) {
	var stages []*syntax.Stmt
	var flatten func(st *syntax.Stmt)
	flatten = func(st *syntax.Stmt) {
		if inner, ok := st.Cmd.(*syntax.BinaryCmd); ok && isPipe(inner) {
			c.piped[inner] = true
			flatten(inner.X)
			flatten(inner.Y)
			return
		}
		stages = append(stages, st)
	}
	flatten(b.X)
	flatten(b.Y)

	fed := false
	for _, st := range stages {
		if fed && c.anyCall(sc, st, func(i info) bool { return i.readsStdin }) {
			c.add(sc.text(b), reasonDownload)
			// Reported once, as a download, not again as input.
			syntax.Walk(st, func(n syntax.Node) bool {
				if ce, ok := n.(*syntax.CallExpr); ok {
					c.fed[ce] = true
				}
				return true
			})
			return
		}
		if c.anyCall(sc, st, func(i info) bool { return i.downloads }) {
			fed = true
		}
	}
}

// anyCall reports whether any simple command within n satisfies pred.
func (c *classifier) anyCall(sc scope, n syntax.Node, pred func(info) bool) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if ce, ok := n.(*syntax.CallExpr); ok && !found && pred(c.call(sc, ce)) {
			found = true
		}
		return !found
	})
	return found
}
