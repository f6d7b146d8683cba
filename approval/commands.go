package approval

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file knows how particular programs run other programs: shells and
// interpreters that take program text, wrappers that run the rest of their
// arguments as a command, and the downloaders whose output must not reach
// a shell.

// downloaders fetch from the network onto standard output.
var downloaders = map[string]bool{
	"curl": true, "wget": true, "wget2": true, "fetch": true,
	"http": true, "https": true, "xh": true, "xhs": true, "lwp-request": true,
}

// shells take shell program text with -c, or read it from standard input.
// Each is parsed in the closest dialect the parser knows; sh is parsed as
// bash, which accepts what sh does, so that a bashism reads as itself and
// not as a parse failure.
var shells = map[string]syntax.LangVariant{
	"sh": syntax.LangBash, "bash": syntax.LangBash, "rbash": syntax.LangBash,
	"dash": syntax.LangBash, "ash": syntax.LangBash, "ksh": syntax.LangBash,
	"yash": syntax.LangBash, "posh": syntax.LangBash, "busybox-sh": syntax.LangBash,
	"zsh":  syntax.LangZsh,
	"mksh": syntax.LangMirBSDKorn, "oksh": syntax.LangMirBSDKorn, "loksh": syntax.LangMirBSDKorn,
	// Not bash syntax: what the bash parser cannot read is dangerous.
	"fish": syntax.LangBash, "csh": syntax.LangBash, "tcsh": syntax.LangBash,
}

// interpreter describes a non-shell language runtime that runs a program
// from standard input when it is given none.
type interpreter struct {
	opts optSpec
	// code lists the options whose value is program text (python -c).
	code []string
	// other lists the options that run something other than standard input
	// (python -m MODULE, php -f FILE).
	other []string
}

// interpreters is keyed by the name without its version (python3.12 is
// python).
var interpreters = map[string]interpreter{
	"python": {opts: optSpec{value: "cmWX"}, code: []string{"-c"}, other: []string{"-m"}},
	"pypy":   {opts: optSpec{value: "cmWX"}, code: []string{"-c"}, other: []string{"-m"}},
	"perl":   {opts: optSpec{value: "eE"}, code: []string{"-e", "-E"}},
	"ruby":   {opts: optSpec{value: "eIrC"}, code: []string{"-e"}},
	"node": {
		opts: optSpec{value: "epr", valueLong: []string{"--eval", "--print", "--require", "--import"}},
		code: []string{"-e", "-p", "--eval", "--print"},
	},
	"nodejs": {
		opts: optSpec{value: "epr", valueLong: []string{"--eval", "--print", "--require", "--import"}},
		code: []string{"-e", "-p", "--eval", "--print"},
	},
	"php":       {opts: optSpec{value: "rRfcd"}, code: []string{"-r", "-R"}, other: []string{"-f"}},
	"lua":       {opts: optSpec{value: "el"}, code: []string{"-e"}},
	"luajit":    {opts: optSpec{value: "elbj"}, code: []string{"-e"}},
	"julia":     {opts: optSpec{value: "eEpLt", valueLong: []string{"--eval", "--print", "--load", "--threads", "--procs"}}, code: []string{"-e", "-E", "--eval", "--print"}},
	"osascript": {opts: optSpec{value: "els"}, code: []string{"-e"}},
	"expect":    {opts: optSpec{value: "cfD"}, code: []string{"-c"}, other: []string{"-f"}},
	"rscript":   {opts: optSpec{value: "e"}, code: []string{"-e"}},
}

// wrapper describes a program that runs the rest of its arguments as a
// command: sudo rm -rf x runs rm -rf x.
type wrapper struct {
	opts optSpec
	// assigns: NAME=value words may come before the command (env, sudo).
	assigns bool
	// operands is how many operands come before the command (timeout's
	// duration, chroot's directory).
	operands int
}

var wrappers = map[string]wrapper{
	"nohup":      {},
	"setsid":     {},
	"command":    {},
	"builtin":    {},
	"noglob":     {}, // zsh precommand modifiers
	"nocorrect":  {},
	"busybox":    {}, // busybox rm -rf x runs the rm applet
	"exec":       {opts: optSpec{value: "a"}},
	"time":       {opts: optSpec{value: "fo", valueLong: []string{"--format", "--output"}}},
	"nice":       {opts: optSpec{value: "n", valueLong: []string{"--adjustment"}}},
	"ionice":     {opts: optSpec{value: "cnpPu", valueLong: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}}},
	"timeout":    {opts: optSpec{value: "sk", valueLong: []string{"--signal", "--kill-after"}}, operands: 1},
	"stdbuf":     {opts: optSpec{value: "ioe", valueLong: []string{"--input", "--output", "--error"}}},
	"taskset":    {operands: 1},
	"chroot":     {opts: optSpec{valueLong: []string{"--userspec", "--groups"}}, operands: 1},
	"caffeinate": {opts: optSpec{value: "tw"}},
	"nsenter":    {opts: optSpec{value: "tSG", valueLong: []string{"--target", "--setuid", "--setgid"}}},
	"unshare": {opts: optSpec{value: "SGRw", valueLong: []string{
		"--setuid", "--setgid", "--root", "--wd", "--map-user", "--map-group",
		"--map-users", "--map-groups", "--propagation", "--setgroups",
	}}},
	"strace": {opts: optSpec{value: "abeEIoOpPsSuUX", valueLong: []string{"--output", "--expr", "--user"}}},
	"env": {
		opts:    optSpec{value: "uCS", valueLong: []string{"--unset", "--chdir", "--split-string"}, loneDash: true},
		assigns: true,
	},
	"sudo": {
		opts: optSpec{value: "aCcDgpRrTtUu", valueLong: []string{
			"--close-from", "--login-class", "--chdir", "--group", "--prompt",
			"--chroot", "--role", "--command-timeout", "--type", "--other-user", "--user",
		}},
		assigns: true,
	},
	"doas":   {opts: optSpec{value: "uC"}},
	"pkexec": {opts: optSpec{valueLong: []string{"--user"}}},
	"xargs": {opts: optSpec{value: "IadELnPs", valueLong: []string{
		"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var",
	}}},
	// Other runners: each runs the rest of its arguments as a command.
	"fakeroot":         {opts: optSpec{value: "lsib", valueLong: []string{"--lib", "--faked"}}},
	"faketime":         {operands: 1},
	"unbuffer":         {},
	"chronic":          {},
	"catchsegv":        {},
	"dbus-run-session": {opts: optSpec{valueLong: []string{"--config-file", "--dbus-daemon"}}},
	"xvfb-run": {opts: optSpec{value: "nfsepw", valueLong: []string{
		"--server-num", "--error-file", "--server-args", "--xauth-protocol", "--wait", "--auth-file",
	}}},
	"firejail": {},
	"valgrind": {},
	"ltrace":   {opts: optSpec{value: "aeEnopsuFlxXAD", valueLong: []string{"--output", "--library"}}},
	"systemd-run": {opts: optSpec{value: "pEuMH", valueLong: []string{
		"--property", "--unit", "--setenv", "--uid", "--gid", "--machine", "--host",
		"--working-directory", "--slice", "--description", "--nice", "--service-type",
		"--on-active", "--on-boot", "--on-startup", "--on-unit-active", "--on-unit-inactive",
		"--on-calendar", "--timer-property", "--path-property", "--socket-property",
	}}},
}

// inner is the command a wrapper runs, or nil when it runs none (sudo -v).
func (w wrapper) inner(args []field) []field {
	_, rest := scanOptions(args, w.opts)
	if w.assigns {
		for len(rest) > 0 && isAssignment(rest[0]) {
			rest = rest[1:]
		}
	}
	if len(rest) <= w.operands {
		return nil
	}
	return rest[w.operands:]
}

// isAssignment reports whether f is NAME=value.
func isAssignment(f field) bool {
	name, _, ok := strings.Cut(f.raw, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if c != '_' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && (i == 0 || !(c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// versionless strips a version from an interpreter's name: python3.12 is
// python.
func versionless(name string) string {
	return strings.TrimRight(name, "0123456789.")
}

// special follows what a program runs besides itself: nested scripts,
// wrapped commands, and what a pipeline needs to know about it.
func (c *classifier) special(sc scope, text, name string, args []field, hops int) info {
	if downloaders[name] {
		return info{downloads: true}
	}
	if lang, ok := shells[name]; ok {
		return c.shell(sc, text, args, lang)
	}
	if p, ok := optionPrograms[name]; ok {
		c.optionProgram(sc, text, p, args)
	}
	if in, ok := interpreters[versionless(name)]; ok {
		return c.interpreter(sc, text, name, args, in)
	}
	switch name {
	case "eval":
		if len(args) > 0 {
			c.nestedFields(sc, text, args, sc.lang)
		}
		return info{wantsCode: len(args) == 0}
	case "source", ".":
		if len(args) == 0 {
			return info{}
		}
		if c.downloadsIn(sc, args[0].word) {
			c.add(text, reasonDownload)
		} else {
			c.runs(text, args[0])
		}
		return info{}
	case "alias":
		c.alias(text, args)
		return info{}
	case "trap":
		c.trap(sc, text, args)
		return info{}
	case "hash":
		if opts, _ := scanOptions(args, optSpec{value: "p"}); hasFlag(opts, "-p") {
			c.add(text, reasonCommandPath)
		}
		return info{}
	case "enable":
		if opts, _ := scanOptions(args, optSpec{value: "f"}); hasFlag(opts, "-f") {
			c.add(text, reasonLoadsBuiltin)
		}
		return info{}
	case "git":
		c.gitOptions(text, args)
		return info{}
	case "script":
		// util-linux script -c CODE runs CODE with the user's shell.
		spec := optSpec{value: "cEIOBTm", valueLong: []string{"--command", "--echo", "--log-in", "--log-out", "--log-io", "--log-timing", "--logging-format"}, permute: true}
		opts, _ := scanOptions(args, spec)
		if code, ok := optionValue(opts, "-c", "--command"); ok {
			c.nested(sc, text, code, syntax.LangBash)
		}
		return info{}
	case "parallel":
		return c.parallel(sc, text, args, hops)
	case "awk", "gawk", "mawk", "nawk":
		c.awk(text, args)
		return info{}
	case "sed", "gsed":
		c.sed(text, args)
		return info{}
	case "sudo":
		c.envAssignments(text, args)
	case "su", "runuser":
		return c.switchUser(sc, text, name, args, hops)
	case "env":
		c.envAssignments(text, args)
		opts, _ := scanOptions(args, wrappers["env"].opts)
		if code, ok := optionValue(opts, "-S", "--split-string"); ok {
			c.nested(sc, text, code, syntax.LangBash)
		}
	case "xargs":
		inf := c.runTimeArgs(sc, text, wrappers["xargs"].inner(args), hops+1)
		// xargs feeds its input to the command as arguments: a shell that
		// is missing its -c script gets it from there.
		return info{readsStdin: inf.wantsCode}
	case "find":
		c.findExec(sc, text, args, hops)
		return info{}
	case "watch":
		return c.watch(sc, text, args, hops)
	case "flock":
		return c.flock(sc, text, args, hops)
	case "tee", "cp", "mv", "install", "rsync":
		c.deviceOperands(text, args, "")
		return info{}
	case "dd":
		c.deviceOperands(text, args, "of=")
		return info{}
	}
	if w, ok := wrappers[name]; ok {
		return c.command(sc, text, w.inner(args), hops+1)
	}
	return info{}
}

// shell inspects sh/bash/zsh ... : the -c script, or whether the program
// comes from standard input.
func (c *classifier) shell(sc scope, text string, args []field, lang syntax.LangVariant) info {
	codeMode, stdin, version := false, false, false
	var operands []field
	var command *field
scan:
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text()
		switch {
		case !a.static():
			operands = args[i:]
			break scan
		case t == "--" || t == "-":
			operands = args[i+1:]
			break scan
		case strings.HasPrefix(t, "--"):
			name, val, eq := strings.Cut(t, "=")
			switch {
			case name == "--command" && eq: // fish --command=CODE
				command = &field{raw: val, word: a.word}
			case name == "--command" && i+1 < len(args):
				i++
				command = &args[i]
			case name == "--version" || name == "--help":
				version = true
			case (name == "--rcfile" || name == "--init-file") && !eq:
				i++
			}
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			for j := 1; j < len(t); j++ {
				switch t[j] {
				case 'c':
					codeMode = codeMode || t[0] == '-'
				case 's':
					stdin = stdin || t[0] == '-'
				case 'o', 'O':
					if j == len(t)-1 {
						i++ // the option's name is the next argument
					}
					j = len(t)
				}
			}
		default:
			operands = args[i:]
			break scan
		}
	}

	switch {
	case version:
		return info{}
	case command != nil:
		c.nested(sc, text, *command, lang)
	case codeMode && len(operands) == 0:
		return info{wantsCode: true}
	case codeMode:
		c.nested(sc, text, operands[0], lang)
	case stdin || len(operands) == 0:
		return info{readsStdin: true, shell: true, lang: lang}
	case c.downloadsIn(sc, operands[0].word):
		// bash <(curl ...): the script file is a download.
		c.add(text, reasonDownload)
	default:
		c.runs(text, operands[0])
	}
	return info{}
}

// interpreter inspects python/perl/node ... : whether the program comes
// from standard input, and whether the program text is a download.
func (c *classifier) interpreter(sc scope, text, name string, args []field, in interpreter) info {
	opts, operands := scanOptions(args, in.opts)
	switch {
	case hasFlag(opts, in.code...):
		code, ok := optionValue(opts, in.code...)
		switch {
		case !ok:
			return info{wantsCode: true}
		case c.downloadsIn(sc, code.word):
			c.add(text, reasonDownload)
		default:
			// Code in another language: the classifier cannot read it.
			c.add(text, fmt.Sprintf("runs %s code, which is not inspected", name))
		}
	case hasFlag(opts, in.other...), hasFlag(opts, "--version", "-V", "--help", "-h"),
		// -v is the version everywhere but in python, where it is verbose.
		!strings.HasPrefix(versionless(name), "py") && hasFlag(opts, "-v"):
	case len(operands) == 0 || operands[0].text() == "-" && operands[0].static():
		return info{readsStdin: true}
	case c.downloadsIn(sc, operands[0].word):
		c.add(text, reasonDownload)
	default:
		c.runs(text, operands[0])
	}
	return info{}
}

// nestedFields inspects program text made of several arguments joined by
// spaces, as eval and watch build it.
func (c *classifier) nestedFields(sc scope, text string, args []field, lang syntax.LangVariant) {
	if !slices.ContainsFunc(args, func(f field) bool { return !f.static() }) {
		parts := make([]string, len(args))
		for i, a := range args {
			parts[i] = a.text()
		}
		c.script(strings.Join(parts, " "), lang, sc.depth+1)
		return
	}
	if slices.ContainsFunc(args, func(f field) bool { return c.downloadsIn(sc, f.word) }) {
		c.add(text, reasonDownload)
		return
	}
	c.add(text, reasonDynamicScript)
}

// switchUser inspects su and runuser: the -c script, and runuser -u's
// command.
func (c *classifier) switchUser(sc scope, text, name string, args []field, hops int) info {
	spec := optSpec{value: "cgGswu", valueLong: []string{"--command", "--session-command", "--group", "--supp-group", "--shell", "--whitelist-environment", "--user"}, permute: true}
	opts, _ := scanOptions(args, spec)
	if code, ok := optionValue(opts, "-c", "--command", "--session-command"); ok {
		c.nested(sc, text, code, syntax.LangBash)
		return info{}
	}
	if name == "runuser" && hasFlag(opts, "-u", "--user") {
		spec.permute = false
		_, cmd := scanOptions(args, spec)
		return c.command(sc, text, cmd, hops+1)
	}
	return info{}
}

// findExec inspects the commands of find's -exec, -execdir, -ok and -okdir.
func (c *classifier) findExec(sc scope, text string, args []field, hops int) {
	for i := 0; i < len(args); i++ {
		switch args[i].text() {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		end := i + 1
		for end < len(args) {
			t := args[end].text()
			if t == ";" || t == "+" && args[end-1].text() == "{}" {
				break
			}
			end++
		}
		cmd := args[i+1 : end]
		if slices.ContainsFunc(cmd, func(f field) bool { return strings.Contains(f.raw, "{}") }) {
			c.runTimeArgs(sc, text, cmd, hops+1)
		} else {
			c.command(sc, text, cmd, hops+1)
		}
		i = end
	}
}

// watch inspects watch's command, which it hands to sh -c unless -x.
func (c *classifier) watch(sc scope, text string, args []field, hops int) info {
	opts, operands := scanOptions(args, optSpec{value: "nq", valueLong: []string{"--interval", "--equexit"}})
	if len(operands) == 0 {
		return info{}
	}
	if hasFlag(opts, "-x", "--exec") {
		return c.command(sc, text, operands, hops+1)
	}
	c.nestedFields(sc, text, operands, syntax.LangBash)
	return info{}
}

// flock inspects flock [options] FILE (-c CODE | COMMAND...).
func (c *classifier) flock(sc scope, text string, args []field, hops int) info {
	spec := optSpec{value: "wEc", valueLong: []string{"--timeout", "--conflict-exit-code", "--command"}}
	opts, operands := scanOptions(args, spec)
	if code, ok := optionValue(opts, "-c", "--command"); ok {
		c.nested(sc, text, code, syntax.LangBash)
		return info{}
	}
	if len(operands) < 2 {
		return info{}
	}
	rest := operands[1:]
	if t := rest[0].text(); t == "-c" || t == "--command" {
		if len(rest) > 1 {
			c.nested(sc, text, rest[1], syntax.LangBash)
		}
		return info{}
	}
	return c.command(sc, text, rest, hops+1)
}

// parallel inspects GNU parallel: the command it runs gets its arguments
// from ::: lists or its input, and with no command each input line is a
// command of its own.
func (c *classifier) parallel(sc scope, text string, args []field, hops int) info {
	spec := optSpec{value: "jSPnNLlaEIdCX", valueLong: []string{
		"--jobs", "--sshlogin", "--max-procs", "--max-args", "--max-lines", "--arg-file",
		"--delimiter", "--colsep", "--replace", "--eof", "--workdir", "--tmpdir", "--results", "--joblog",
	}}
	_, operands := scanOptions(args, spec)
	end := slices.IndexFunc(operands, func(f field) bool { return strings.HasPrefix(f.text(), ":::") })
	if end < 0 {
		end = len(operands)
	}
	if end == 0 {
		c.add(text, reasonStdinProgram)
		return info{}
	}
	c.runTimeArgs(sc, text, operands[:end], hops+1)
	return info{}
}
