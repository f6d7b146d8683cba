package approval

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Rule says when one simple command is dangerous. Every condition that is
// set must hold:
//
//   - Command: the command's name, after quote removal and with any
//     directory stripped (/bin/rm is rm), equals one of these, compared
//     without regard to case (macOS file systems find RM as rm). A name may
//     be a path.Match pattern: "mkfs.*".
//   - Subcommand: one level per element, each a list of alternatives
//     (patterns allowed): {{"system"}, {"prune"}} for docker system prune.
//     Options may come before a subcommand (git -C dir push).
//   - Options: at least one of these options is present before a "--".
//     "--long" matches --long, --long=value and an abbreviation of at least
//     three characters (--rec for --recursive), as getopt_long accepts.
//     "-x" matches any argument that starts with a single dash and contains
//     every letter after the dash, in any order: -r matches -r, -rf, -fr and
//     -vrf; -rf matches -rf and -fvr but not -r -f; -delete matches find's
//     -delete. Letters are case-sensitive (chmod -R, not -r).
//   - Args: at least one argument, anywhere, is exactly one of these
//     (kill -1, git checkout .).
//
// Rules see every simple command, including those behind wrappers (sudo,
// env, xargs, find -exec, ...) and inside nested scripts (bash -c, eval).
type Rule struct {
	Command    []string
	Subcommand [][]string
	Options    []string
	Args       []string
	// Reason is shown to the human, after the command: "recursive delete".
	Reason string
}

// Rules is an ordered list of rules; a command is dangerous when any of
// them matches. Config adds to the defaults with
// append(DefaultRules(), extra...).
type Rules []Rule

// defaultRuleSpecs is the default dangerous list, in the syntax ParseRule
// accepts, so that the defaults and the config share one language.
// rules.md documents each entry; keep the two in step (a test checks).
var defaultRuleSpecs = []string{
	// Deletes that take a whole tree, or whatever find matched, with them.
	"rm -r -R --recursive # recursive delete",
	"find -delete # deletes every file find matches",
	"shred # overwrites files beyond recovery",

	// Git operations that publish work or throw uncommitted work away.
	"git push # pushes to a remote",
	"git reset --hard # discards uncommitted changes",
	"git clean -f --force # deletes untracked files",
	"git checkout -- . # discards uncommitted changes",
	"git restore -- . # discards uncommitted changes",

	// Running as someone else.
	"sudo|sudoedit|su|doas|pkexec|runuser # privilege escalation: runs as another user",

	// Recursive permission and ownership changes.
	"chmod|chown|chgrp -R --recursive # recursive permission or ownership change",

	// Disks and file systems.
	"dd # raw copy that can overwrite disks",
	"mkfs|mkfs.*|mke2fs|mkswap|newfs|newfs_* # creates a file system, erasing the device",
	"fdisk|sfdisk|cfdisk|gdisk|sgdisk|parted|wipefs|blkdiscard # rewrites partitions or erases a device",
	"diskutil erase*|zerodisk|randomdisk|secureerase|partitiondisk|reformat # erases a disk",

	// Processes, services and the machine itself.
	"kill -- -1 # signals every process you can reach",
	"shutdown|reboot|halt|poweroff # shuts down or restarts the machine",
	"systemctl start|stop|restart|reload|try-restart|reload-or-restart|try-reload-or-restart|kill|enable|disable|reenable|mask|isolate|set-default|daemon-reload|daemon-reexec|edit|set-property|revert|poweroff|reboot|halt|kexec|suspend|hibernate|hybrid-sleep # changes system services or power state",
	"service # controls system services",
	"launchctl bootout|bootstrap|load|unload|remove|stop|kill|kickstart|enable|disable # controls system services",
	"crontab -r # deletes the crontab",
}

// defaultRules is parsed once; DefaultRules hands out copies so that a
// caller appending to or editing its Rules cannot change anyone else's.
var defaultRules = mustParseRules(defaultRuleSpecs)

func mustParseRules(specs []string) Rules {
	rules, err := ParseRules(specs)
	if err != nil {
		panic(fmt.Sprintf("approval: bad default rule: %v", err))
	}
	return rules
}

// DefaultRules returns a fresh copy of the default dangerous list
// (rules.md lists it).
func DefaultRules() Rules { return defaultRules.clone() }

func (rs Rules) clone() Rules {
	out := make(Rules, len(rs))
	for i, r := range rs {
		out[i] = Rule{
			Command: slices.Clone(r.Command),
			Options: slices.Clone(r.Options),
			Args:    slices.Clone(r.Args),
			Reason:  r.Reason,
		}
		for _, level := range r.Subcommand {
			out[i].Subcommand = append(out[i].Subcommand, slices.Clone(level))
		}
	}
	return out
}

// ParseRules parses one rule per string, as the config's list of extra
// dangerous commands; the error names the entry that is wrong.
func ParseRules(specs []string) (Rules, error) {
	rules := make(Rules, 0, len(specs))
	for i, spec := range specs {
		r, err := ParseRule(spec)
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i+1, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// ParseRule parses a rule written the way the command looks on a command
// line:
//
//	COMMAND [SUBCOMMAND...] [OPTION...] [-- ARG...] [# REASON]
//
//	"git push"                          any git push
//	"kubectl delete"                    any kubectl delete
//	"docker system prune"               subcommands nest
//	"rm -r -R --recursive"              rm with any of these options
//	"git clean -f --force"              git clean with -f (also in -fd) or --force
//	"systemctl start|stop|restart"      "|" separates alternatives
//	"mkfs|mkfs.*"                       names may be path.Match patterns
//	"kill -- -1"                        words after "--" are exact arguments
//	"terraform destroy # destroys infrastructure"
//
// Words are separated by white space; there is no quoting. Names and
// subcommands match without regard to case. Options are alternatives: the
// rule matches when any one is present (Rule explains how each form
// matches). Subcommands must come before options. The reason after "#" is
// what the human reads; without one it is `matches rule "SPEC"`.
func ParseRule(spec string) (Rule, error) {
	body, reason, _ := strings.Cut(spec, "#")
	words := strings.Fields(body)
	if len(words) == 0 {
		return Rule{}, fmt.Errorf("empty rule %q: write at least a command name, e.g. \"git push\"", spec)
	}
	var r Rule
	names, err := alternatives(words[0], "command name")
	if err != nil {
		return Rule{}, fmt.Errorf("rule %q: %w", spec, err)
	}
	for _, n := range names {
		if strings.Contains(n, "/") {
			return Rule{}, fmt.Errorf("rule %q: command %q contains a /: rules match the name without its directory, write %q", spec, n, path.Base(n))
		}
		if strings.HasPrefix(n, "-") {
			return Rule{}, fmt.Errorf("rule %q: the first word must be a command name, not the option %q", spec, n)
		}
	}
	r.Command = names

	const (
		inSubcommands = iota
		inOptions
		inArgs
	)
	state := inSubcommands
	for _, w := range words[1:] {
		switch {
		case state == inArgs:
			r.Args = append(r.Args, w)
		case w == "--":
			state = inArgs
		case strings.HasPrefix(w, "-"):
			if err := checkOption(w); err != nil {
				return Rule{}, fmt.Errorf("rule %q: %w", spec, err)
			}
			r.Options = append(r.Options, w)
			state = inOptions
		case state == inOptions:
			return Rule{}, fmt.Errorf("rule %q: subcommand %q must come before the options", spec, w)
		default:
			level, err := alternatives(w, "subcommand")
			if err != nil {
				return Rule{}, fmt.Errorf("rule %q: %w", spec, err)
			}
			r.Subcommand = append(r.Subcommand, level)
		}
	}
	if state == inArgs && len(r.Args) == 0 {
		return Rule{}, fmt.Errorf("rule %q: nothing after \"--\": name the exact arguments that make the command dangerous", spec)
	}

	r.Reason = strings.TrimSpace(reason)
	if r.Reason == "" {
		r.Reason = fmt.Sprintf("matches rule %q", strings.Join(words, " "))
	}
	return r, nil
}

// alternatives splits "a|b|c" into lower-case names and checks each is a
// usable pattern.
func alternatives(word, what string) ([]string, error) {
	parts := strings.Split(strings.ToLower(word), "|")
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("empty %s in %q", what, word)
		}
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("%s %q is not a valid pattern: %w", what, p, err)
		}
	}
	return parts, nil
}

func checkOption(w string) error {
	if w == "-" {
		return fmt.Errorf("option %q has no name", w)
	}
	if strings.Contains(w, "|") {
		return fmt.Errorf("option %q: options are already alternatives, list them as separate words", w)
	}
	if strings.Contains(w, "=") {
		return fmt.Errorf("option %q: name the option without a value", w)
	}
	if strings.HasPrefix(w, "--") && len(w) < 3 {
		return fmt.Errorf("option %q has no name", w)
	}
	return nil
}

// String renders r in the syntax ParseRule accepts.
func (r Rule) String() string {
	words := []string{strings.Join(r.Command, "|")}
	for _, level := range r.Subcommand {
		words = append(words, strings.Join(level, "|"))
	}
	words = append(words, r.Options...)
	if len(r.Args) > 0 {
		words = append(words, "--")
		words = append(words, r.Args...)
	}
	s := strings.Join(words, " ")
	if r.Reason != "" {
		s += " # " + r.Reason
	}
	return s
}

// match reports whether the simple command name args... is dangerous by r.
// name is already lower case and stripped of its directory.
func (r *Rule) match(name string, args []field) bool {
	if !matchAny(r.Command, name) {
		return false
	}
	if !matchSubcommands(args, r.Subcommand) {
		return false
	}
	if len(r.Options) > 0 && !slices.ContainsFunc(r.Options, func(opt string) bool { return hasOption(args, opt) }) {
		return false
	}
	if len(r.Args) > 0 && !slices.ContainsFunc(args, func(a field) bool { return a.static() && slices.Contains(r.Args, a.text()) }) {
		return false
	}
	return true
}

// matchAny reports whether word, already lower case, is one of patterns.
func matchAny(patterns []string, word string) bool {
	for _, p := range patterns {
		p = strings.ToLower(p)
		if !strings.ContainsAny(p, `*?[\`) {
			if p == word {
				return true
			}
			continue
		}
		if ok, err := path.Match(p, word); err == nil && ok {
			return true
		}
	}
	return false
}

// maxSubcommandCandidates bounds the words tried as a subcommand at one
// level, so that a line of a thousand "-x y" pairs costs no more than a
// short one.
const maxSubcommandCandidates = 32

// matchSubcommands reports whether args begins, after options, with the
// subcommand path levels.
//
// Without knowing which of a tool's options take a value (git -C DIR,
// kubectl -n NS) the subcommand cannot be told from an option's value, so
// every word that could be the subcommand is tried: the first word that is
// not an option and, as long as the word tried follows an option without
// "=" (whose value it might be), the next one too. git -C /repo push tries
// /repo and push; git commit -m push tries only commit.
func matchSubcommands(args []field, levels [][]string) bool {
	if len(levels) == 0 {
		return true
	}
	for _, i := range subcommandCandidates(args) {
		if args[i].static() && matchAny(levels[0], strings.ToLower(args[i].text())) &&
			matchSubcommands(args[i+1:], levels[1:]) {
			return true
		}
	}
	return false
}

func subcommandCandidates(args []field) []int {
	var out []int
	afterBareOption := false
	for i, a := range args {
		t := a.text()
		if t == "--" {
			if i+1 < len(args) {
				out = append(out, i+1)
			}
			break
		}
		if isOption(t) {
			afterBareOption = !strings.Contains(t, "=")
			continue
		}
		out = append(out, i)
		if !afterBareOption || len(out) >= maxSubcommandCandidates {
			break
		}
		afterBareOption = false
	}
	return out
}

// isOption reports whether an argument looks like an option: a dash and at
// least one more character.
func isOption(t string) bool { return len(t) > 1 && t[0] == '-' }

// hasOption reports whether opt, in rule syntax, is present among args
// before the first "--".
func hasOption(args []field, opt string) bool {
	for _, a := range args {
		t := a.text()
		if t == "--" {
			return false
		}
		if !isOption(t) {
			continue
		}
		if strings.HasPrefix(opt, "--") {
			if !strings.HasPrefix(t, "--") {
				continue
			}
			name, _, _ := strings.Cut(t, "=")
			if name == opt || (len(name) >= 5 && strings.HasPrefix(opt, name)) {
				return true
			}
			continue
		}
		if strings.HasPrefix(t, "--") {
			continue
		}
		if t == opt || containsLetters(t[1:], opt[1:]) {
			return true
		}
	}
	return false
}

// containsLetters reports whether every byte of letters occurs in cluster.
func containsLetters(cluster, letters string) bool {
	for i := 0; i < len(letters); i++ {
		if strings.IndexByte(cluster, letters[i]) < 0 {
			return false
		}
	}
	return true
}
