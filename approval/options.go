package approval

import (
	"slices"
	"strings"
)

// optSpec is what the classifier needs to know about a program's options
// to find where its operands, and the command it runs, begin: which
// options take a value as the next argument.
type optSpec struct {
	// value lists the short options that take a value (-u USER); the value
	// may also be attached (-uroot).
	value string
	// valueLong lists the long options that take a value when it is not
	// attached with "=" (--user USER).
	valueLong []string
	// loneDash: a lone "-" is an option (env -), not an operand.
	loneDash bool
	// permute: options may come after operands, as GNU getopt allows by
	// default (su root -c CMD).
	permute bool
}

// option is one option found on a command line. Short options in a
// cluster (-lc) are reported one by one.
type option struct {
	name     string // "-c" or "--command"
	value    field  // its value, when it takes one
	hasValue bool
}

// scanOptions splits args into options and operands. Without permute,
// scanning stops at the first operand or "--", and the operands are all of
// the rest. An argument only known at run time is taken as an operand: it
// might be anything, and treating it as the command is the careful choice.
func scanOptions(args []field, spec optSpec) (opts []option, operands []field) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text()
		switch {
		case !a.static():
		case t == "--":
			return opts, append(operands, args[i+1:]...)
		case t == "-" && spec.loneDash:
			opts = append(opts, option{name: "-"})
			continue
		case strings.HasPrefix(t, "--"):
			name, val, eq := strings.Cut(t, "=")
			o := option{name: name}
			switch {
			case eq:
				o.value, o.hasValue = field{raw: val, word: a.word}, true
			case slices.Contains(spec.valueLong, name) && i+1 < len(args):
				i++
				o.value, o.hasValue = args[i], true
			}
			opts = append(opts, o)
			continue
		case isOption(t):
			for j := 1; j < len(t); j++ {
				o := option{name: "-" + t[j:j+1]}
				if strings.IndexByte(spec.value, t[j]) >= 0 {
					if j+1 < len(t) {
						o.value, o.hasValue = field{raw: t[j+1:], word: a.word}, true
					} else if i+1 < len(args) {
						i++
						o.value, o.hasValue = args[i], true
					}
					opts = append(opts, o)
					break
				}
				opts = append(opts, o)
			}
			continue
		}
		// An operand.
		if !spec.permute {
			return opts, append(operands, args[i:]...)
		}
		operands = append(operands, a)
	}
	return opts, operands
}

// optionValue returns the value of the last of the named options, as the
// last one usually wins.
func optionValue(opts []option, names ...string) (field, bool) {
	for i := len(opts) - 1; i >= 0; i-- {
		if opts[i].hasValue && slices.Contains(names, opts[i].name) {
			return opts[i].value, true
		}
	}
	return field{}, false
}

// hasFlag reports whether any of the named options is present.
func hasFlag(opts []option, names ...string) bool {
	return slices.ContainsFunc(opts, func(o option) bool { return slices.Contains(names, o.name) })
}
