package approval

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Programs that run a command named in one of their options: tar
// --to-command='sh -c …', rsync -e, ssh -o ProxyCommand=…. The option's
// value is read as a shell command and checked like any other, so rsync -e
// ssh and tar -I zstd stay quiet while tar --to-command='git push' does
// not.

// optionProgram describes one such program.
type optionProgram struct {
	opts optSpec
	// run lists the options whose value is a command; a value of the form
	// "PREFIX=CMD" is listed as "--option=PREFIX=" (tar's
	// --checkpoint-action=exec=CMD).
	run []string
	// sshOptions: -o KEY=VALUE where some keys are commands (ssh, scp, sftp).
	sshOptions bool
	// files lists the options whose value is a file of the program's
	// configuration that may name commands (ssh -F).
	files []string
}

var optionPrograms = map[string]optionProgram{
	"tar": {
		opts: optSpec{value: "fCbHIKLNTVgXF", valueLong: []string{
			"--file", "--directory", "--use-compress-program", "--to-command", "--info-script",
			"--new-volume-script", "--rsh-command", "--rmt-command", "--checkpoint-action",
			"--exclude", "--files-from", "--exclude-from", "--transform", "--owner", "--group",
		}, permute: true},
		run: []string{"-I", "--use-compress-program", "--to-command", "-F", "--info-script",
			"--new-volume-script", "--rsh-command", "--rmt-command", "--checkpoint-action=exec="},
	},
	"rsync": {
		opts: optSpec{value: "eBfT", valueLong: []string{"--rsh", "--rsync-path", "--filter", "--temp-dir"}, permute: true},
		run:  []string{"-e", "--rsh", "--rsync-path"},
	},
	"ssh":  {opts: optSpec{value: "bcDEeFIiJLlmOoPpQRSWw", permute: true}, sshOptions: true, files: []string{"-F"}},
	"scp":  {opts: optSpec{value: "cDFiJloPSX", permute: true}, sshOptions: true, files: []string{"-F"}, run: []string{"-S"}},
	"sftp": {opts: optSpec{value: "BbcDFiJloPRSsX", permute: true}, sshOptions: true, files: []string{"-F"}, run: []string{"-S", "-D"}},
	"sort": {opts: optSpec{value: "kotST", valueLong: []string{"--compress-program", "--key", "--output", "--field-separator", "--temporary-directory", "--buffer-size"}, permute: true},
		run: []string{"--compress-program"}},
	"rg":  {opts: optSpec{value: "efgtTmABCM", valueLong: []string{"--pre", "--regexp", "--file", "--glob", "--type", "--type-not"}, permute: true}, run: []string{"--pre"}},
	"man": {opts: optSpec{value: "PHMSsLm", valueLong: []string{"--pager", "--html"}, permute: true}, run: []string{"-P", "--pager", "-H", "--html"}},
}

// sshCommandKeys are the ssh configuration keys whose value is a command.
var sshCommandKeys = []string{"proxycommand", "localcommand", "knownhostscommand"}

// optionProgram checks the commands a program takes in its options.
func (c *classifier) optionProgram(sc scope, text string, p optionProgram, args []field) {
	// An option with a run-time part (-o"$x") is not scanned as an option:
	// it may be any of them.
	if slices.ContainsFunc(args, func(f field) bool { return !f.static() && isOption(f.text()) }) {
		c.add(text, reasonDynamicScript)
	}
	opts, _ := scanOptions(args, p.opts)
	for _, o := range opts {
		if !o.hasValue {
			continue
		}
		value := o.value
		switch {
		case p.sshOptions && o.name == "-o":
			key, cmd, ok := strings.Cut(value.raw, "=")
			if !ok {
				key, cmd, _ = strings.Cut(value.raw, " ")
			}
			if slices.Contains(sshCommandKeys, strings.ToLower(strings.TrimSpace(key))) {
				c.nested(sc, text, field{raw: cmd, word: value.word}, syntax.LangBash)
			}
		case slices.Contains(p.files, o.name):
			c.runs(text, value)
		default:
			for _, r := range p.run {
				name, prefix, hasPrefix := strings.Cut(r, "=")
				if !longMatch(o.name, name) {
					continue
				}
				cmd := value
				if hasPrefix {
					rest, ok := strings.CutPrefix(value.raw, prefix)
					if !ok {
						continue
					}
					cmd = field{raw: rest, word: value.word}
				}
				c.nested(sc, text, cmd, syntax.LangBash)
				break
			}
		}
	}
}

// longMatch reports whether an option as written names opt: exactly, or
// as an abbreviation of a long option of at least five characters
// (--to-com for --to-command), which getopt_long accepts.
func longMatch(written, opt string) bool {
	return written == opt || strings.HasPrefix(opt, "--") && len(written) >= 5 && strings.HasPrefix(opt, written)
}
