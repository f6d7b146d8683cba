package approval

import "strings"

// This file reads the programs of awk and sed just far enough to see
// whether they can start other programs: awk's system() and pipes, GNU
// sed's e command and s///e flag. Everything else they do is text.

const (
	reasonAwkRuns = "runs awk code that can start programs"
	reasonSedRuns = "runs sed code that can start programs"
)

// awk inspects awk, gawk, mawk and nawk: the program text (first operand,
// or -e/--source), and the program files they load.
func (c *classifier) awk(text string, args []field) {
	spec := optSpec{value: "fvFeilEW", valueLong: []string{
		"--file", "--assign", "--field-separator", "--source", "--include", "--load", "--exec",
	}}
	opts, operands := scanOptions(args, spec)
	given := false
	for _, o := range opts {
		switch o.name {
		case "-e", "--source":
			given = true
			c.awkProgram(text, o.value)
		case "-f", "--file", "-i", "--include", "-E", "--exec":
			given = true
			c.runs(text, o.value)
		case "-l", "--load":
			c.add(text, "loads an awk extension")
		}
	}
	if !given && len(operands) > 0 {
		c.awkProgram(text, operands[0])
	}
}

// awkProgram says dangerous when the program can start one: system(), a
// pipe to or from a command (print | "sh", "cmd" | getline), or an
// extension. A | in a regular expression (/a|b/) asks too: telling the two
// apart needs an awk parser.
func (c *classifier) awkProgram(text string, prog field) {
	if !prog.static() {
		c.add(text, reasonDynamicScript)
		return
	}
	p := prog.text()
	if strings.Contains(p, "system") || strings.Contains(p, "|") || strings.Contains(p, "@load") {
		c.add(text, reasonAwkRuns)
	}
}

// sed inspects sed's scripts (-e, --expression, or the first operand) and
// the script files it reads. --sandbox turns off e, r and w.
func (c *classifier) sed(text string, args []field) {
	spec := optSpec{value: "efl", valueLong: []string{"--expression", "--file", "--line-length"}, permute: true}
	opts, operands := scanOptions(args, spec)
	if hasFlag(opts, "--sandbox") {
		return
	}
	given := false
	for _, o := range opts {
		switch o.name {
		case "-e", "--expression":
			given = true
			c.sedScript(text, o.value)
		case "-f", "--file":
			given = true
			c.runs(text, o.value)
		}
	}
	if !given && len(operands) > 0 {
		c.sedScript(text, operands[0])
	}
}

func (c *classifier) sedScript(text string, script field) {
	if !script.static() {
		c.add(text, reasonDynamicScript)
		return
	}
	if sedExecutes(script.text()) {
		c.add(text, reasonSedRuns)
	}
}

// sedExecutes reports whether a sed script has GNU sed's e command or an
// s command with the e flag. It walks the script command by command,
// skipping addresses, regular expressions, replacement text and file
// names; where it is unsure it reads on, so a misreading leans to finding
// an e.
func sedExecutes(s string) bool {
	// skipDelimited returns the index after the next unescaped d from i.
	skipDelimited := func(i int, d byte) int {
		for i < len(s) && s[i] != d {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		return i + 1
	}
	toEOL := func(i int) int {
		for i < len(s) && s[i] != '\n' {
			i++
		}
		return i
	}
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case strings.IndexByte(" \t\n;{}!,$~+0123456789", ch) >= 0:
			i++
			continue
		case ch == '/':
			i = skipDelimited(i+1, '/')
			continue
		case ch == '\\' && i+1 < len(s):
			i = skipDelimited(i+2, s[i+1]) // \cREGEXc
			continue
		case ch == '#':
			i = toEOL(i)
			continue
		}
		i++
		switch ch {
		case 'e':
			return true
		case 's':
			if i >= len(s) {
				return false
			}
			d := s[i]
			i = skipDelimited(i+1, d) // the pattern
			i = skipDelimited(i, d)   // the replacement
			for i < len(s) && strings.IndexByte(";\n}", s[i]) < 0 {
				switch s[i] {
				case 'e':
					return true
				case 'w':
					i = toEOL(i)
					continue
				}
				i++
			}
		case 'y':
			if i < len(s) {
				d := s[i]
				i = skipDelimited(i+1, d)
				i = skipDelimited(i, d)
			}
		case 'a', 'i', 'c', 'r', 'R', 'w', 'W', ':':
			i = toEOL(i) // text, a file name or a label
		case 'b', 't', 'T':
			for i < len(s) && s[i] != ';' && s[i] != '\n' {
				i++
			}
		}
	}
	return false
}
