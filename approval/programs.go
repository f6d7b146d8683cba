package approval

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// NamedFile is a file whose content a command runs: a program named by a
// path (./build.sh), a script given to a shell or an interpreter (bash
// task.sh, python3 tool.py, source env.sh), the Makefile make reads, the
// package.json whose scripts npm runs.
type NamedFile struct {
	// Path is the file as the command names it, relative to Dir when it is
	// not absolute.
	Path string
	// Dir is where a relative Path starts, relative to the command's
	// working directory when not absolute: "" for the working directory
	// itself, or the literal operand of a cd earlier in the command.
	Dir string
	// Alternatives are other names the program would read instead when
	// they exist (make reads GNUmakefile, makefile, Makefile, the first
	// that exists).
	Alternatives []string
	// Lookup says Path is a bare program name, which the shell finds
	// through PATH (a PATH entry may be a directory the agent can write).
	Lookup bool
}

// NamedFiles lists the files that command, a bash command line, runs as
// program text, so that the approval question can show (and pin) the ones
// the agent can write. It reads what a command says, not what it computes:
// names known only at run time ($x/build.sh) are not listed, and a cd is
// followed in source order whatever the control flow. The question shows
// the command too; this is what it adds, not a boundary.
//
// complete is false when the command names more than MaxNamedFiles: the
// caller refuses to ask about what it cannot show and pin whole.
func NamedFiles(command string) (files []NamedFile, complete bool) {
	defer func() {
		if recover() != nil {
			files, complete = nil, true // a command that cannot be read adds nothing
		}
	}()
	n := &namer{}
	n.script(command, syntax.LangBash, 0)
	return n.files, !n.overflow
}

// MaxNamedFiles bounds what one command can make cordon stat and hash.
const MaxNamedFiles = 64

type namer struct {
	files    []NamedFile
	overflow bool   // more than MaxNamedFiles were named
	dir      string // the operand of the last literal cd, "" for none
}

func (n *namer) add(p string, alt ...string) {
	n.addFile(NamedFile{Path: p, Dir: n.dir, Alternatives: alt})
}

func (n *namer) addFile(f NamedFile) {
	if f.Path == "" {
		return
	}
	if f.Lookup {
		f.Dir = "" // a relative PATH entry starts where the command does, as the best guess
	}
	for _, g := range n.files {
		if g.Path == f.Path && g.Dir == f.Dir && g.Lookup == f.Lookup {
			return
		}
	}
	if len(n.files) == MaxNamedFiles {
		n.overflow = true
		return
	}
	n.files = append(n.files, f)
}

// builtins are run by bash itself, never looked up in PATH.
var builtins = map[string]bool{
	":": true, ".": true, "[": true, "alias": true, "bg": true, "bind": true, "break": true, "builtin": true,
	"caller": true, "cd": true, "command": true, "compgen": true, "complete": true, "continue": true,
	"declare": true, "dirs": true, "disown": true, "echo": true, "enable": true, "eval": true, "exec": true,
	"exit": true, "export": true, "false": true, "fc": true, "fg": true, "getopts": true, "hash": true,
	"help": true, "history": true, "jobs": true, "kill": true, "let": true, "local": true, "logout": true,
	"mapfile": true, "popd": true, "printf": true, "pushd": true, "pwd": true, "read": true,
	"readarray": true, "readonly": true, "return": true, "set": true, "shift": true, "shopt": true,
	"source": true, "suspend": true, "test": true, "times": true, "trap": true, "true": true, "type": true,
	"typeset": true, "ulimit": true, "umask": true, "unalias": true, "unset": true, "wait": true,
}

func (n *namer) script(src string, lang syntax.LangVariant, depth int) {
	if depth > maxNesting || len(src) > MaxCommandBytes || parenDepth(src) > maxParens {
		return
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(src), "")
	if err != nil {
		return
	}
	syntax.Walk(f, func(node syntax.Node) bool {
		if ce, ok := node.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
			if args, ok := fields(ce.Args); ok {
				n.command(args, depth, 0)
			}
		}
		return true
	})
}

// command notes what one simple command (or the command a wrapper runs)
// names.
func (n *namer) command(argv []field, depth, hops int) {
	if len(argv) == 0 || hops > maxNesting || !argv[0].static() || argv[0].glob {
		return
	}
	prog, args := argv[0].text(), argv[1:]
	if strings.Contains(prog, "/") {
		n.add(prog)
	} else if !builtins[prog] && !isAssignment(argv[0]) {
		n.addFile(NamedFile{Path: prog, Lookup: true})
	}
	name := strings.ToLower(path.Base(prog))
	switch {
	case name == "cd" || name == "pushd":
		n.cd(args)
		return
	case name == "source" || name == ".":
		if len(args) > 0 {
			n.operand(args[0])
		}
		return
	case name == "make" || name == "gmake":
		n.makefile(args)
		return
	case name == "npm" || name == "pnpm" || name == "yarn" || name == "bun" || name == "npx":
		// Every one of them runs the scripts of the package.json of the
		// directory it runs in (npm install runs lifecycle scripts).
		n.add("package.json")
		return
	}
	if lang, ok := shells[name]; ok {
		n.shell(args, lang, depth)
		return
	}
	if in, ok := interpreters[versionless(name)]; ok {
		opts, operands := scanOptions(args, in.opts)
		if !hasFlag(opts, in.code...) && !hasFlag(opts, in.other...) && len(operands) > 0 {
			n.operand(operands[0])
		}
		return
	}
	if w, ok := wrappers[name]; ok {
		n.command(w.inner(args), depth, hops+1)
	}
}

// operand notes a script named by an argument, unless it is standard
// input or only known at run time.
func (n *namer) operand(f field) {
	if f.static() && !f.glob && f.text() != "-" {
		n.add(f.text())
	}
}

// cd follows a literal cd for the names that come after it.
func (n *namer) cd(args []field) {
	if len(args) > 0 && args[0].text() == "--" {
		args = args[1:]
	}
	if len(args) == 0 || !args[0].static() || args[0].glob || args[0].text() == "-" || strings.HasPrefix(args[0].text(), "~") {
		// Where it goes is not known here: later relative names are read
		// against the working directory, as the best guess.
		n.dir = ""
		return
	}
	d := args[0].text()
	if path.IsAbs(d) || n.dir == "" {
		n.dir = path.Clean(d)
		return
	}
	n.dir = path.Join(n.dir, d)
}

// shell notes the script file a shell runs: its first operand, unless the
// program text is an argument (-c) or standard input (-s).
func (n *namer) shell(args []field, lang syntax.LangVariant, depth int) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text()
		switch {
		case !a.static():
			return
		case t == "--" || t == "-":
			if i+1 < len(args) && t == "--" {
				n.operand(args[i+1])
			}
			return
		case strings.HasPrefix(t, "--"):
			if t == "--rcfile" || t == "--init-file" {
				i++
			}
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			if t[0] == '-' && strings.ContainsAny(t[1:], "c") {
				if i+1 < len(args) && args[i+1].static() {
					n.script(args[i+1].text(), lang, depth+1)
				}
				return
			}
			if t[0] == '-' && strings.ContainsAny(t[1:], "s") {
				return
			}
			if strings.ContainsAny(t[len(t)-1:], "oO") {
				i++
			}
		default:
			n.operand(a)
			return
		}
	}
}

// makefile notes the makefile make reads: -f FILE, else the first of
// GNUmakefile, makefile and Makefile that exists, in -C DIR if given.
func (n *namer) makefile(args []field) {
	opts, _ := scanOptions(args, optSpec{value: "fCIjlo", valueLong: []string{"--file", "--makefile", "--directory"}, permute: true})
	saved := n.dir
	defer func() { n.dir = saved }()
	if d, ok := optionValue(opts, "-C", "--directory"); ok {
		n.cd([]field{d})
	}
	if f, ok := optionValue(opts, "-f", "--file", "--makefile"); ok {
		n.operand(f)
		return
	}
	n.add("GNUmakefile", "makefile", "Makefile")
}
