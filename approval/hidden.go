package approval

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file holds the checks for command lines that hide what runs: the
// name under which a command runs is redefined (functions, aliases, hash
// -p, git -c alias.*), its arguments arrive at run time (xargs, parallel,
// find -exec {}), or its program is text the classifier cannot read (code
// for an interpreter, a file the same command line writes, a variable that
// names a program). Where the classifier cannot tell what runs, it says
// dangerous, so that under ask-dangerous the human decides.

// harmlessPrograms do nothing the rules or the built-in checks look for
// whatever arguments they get, and run no other program: xargs grep and
// find -exec cat {} may pass them anything. A program that takes a program
// to run among its options is not here (sort --compress-program, rg --pre,
// less with LESSOPEN, find -exec), nor is one that a configured rule names.
var harmlessPrograms = map[string]bool{
	"echo": true, "printf": true, "cat": true, "tac": true, "ls": true,
	"grep": true, "egrep": true, "fgrep": true, "head": true, "tail": true,
	"wc": true, "uniq": true, "cut": true, "tr": true, "nl": true, "rev": true,
	"basename": true, "dirname": true, "realpath": true, "readlink": true,
	"stat": true, "file": true, "du": true, "df": true, "true": true,
	"false": true, "test": true, "[": true, "pwd": true, "date": true,
	"diff": true, "cmp": true, "md5sum": true, "sha1sum": true,
	"sha256sum": true, "sha512sum": true, "jq": true, "touch": true,
	"mkdir": true,
}

// harmless reports whether f names a program that is harmless with any
// arguments under these rules.
func (c *classifier) harmless(f field) bool {
	name, ok := commandName(f)
	if !ok || !harmlessPrograms[name] {
		return false
	}
	for i := range c.rules {
		if matchAny(c.rules[i].Command, name) {
			return false
		}
	}
	return true
}

// runTimeArgs reports a command that gets arguments only known at run time
// (xargs appends its input, find -exec replaces {}), unless something
// already made the command dangerous or it is harmless whatever it gets.
func (c *classifier) runTimeArgs(sc scope, text string, argv []field, hops int) info {
	before := len(c.findings) + c.more
	inf := c.command(sc, text, argv, hops)
	if len(argv) > 0 && len(c.findings)+c.more == before && !c.harmless(argv[0]) {
		c.add(text, reasonRunTimeArgs)
	}
	return inf
}

// unknownSubcommand reports whether a rule's subcommand might be present
// but cannot be seen: the word that would be the subcommand is only known
// at run time ($op, a glob such as pu*), at any level. git "$op" and git
// $FLAGS push may be git push; git -C "$dir" status is not.
func unknownSubcommand(args []field, levels [][]string) bool {
	if len(levels) == 0 {
		return false
	}
	cands := subcommandCandidates(args)
	if len(cands) == 0 {
		return false
	}
	if last := args[cands[len(cands)-1]]; !last.static() || last.glob {
		return true
	}
	for _, i := range cands {
		if args[i].static() && matchAny(levels[0], strings.ToLower(args[i].text())) &&
			unknownSubcommand(args[i+1:], levels[1:]) {
			return true
		}
	}
	return false
}

// alias reports an alias definition: alias gp='git push' makes gp run
// git push wherever aliases are expanded. Listing aliases is harmless.
func (c *classifier) alias(text string, args []field) {
	for _, a := range args {
		if !a.static() || strings.Contains(a.text(), "=") {
			c.add(text, reasonAlias)
			return
		}
	}
}

// trap inspects the code a trap runs: trap 'git push' EXIT runs git push
// when the shell exits.
func (c *classifier) trap(sc scope, text string, args []field) {
	_, operands := scanOptions(args, optSpec{})
	if len(operands) < 2 {
		return // trap SIG resets, trap -p lists
	}
	code := operands[0]
	if code.static() && (code.text() == "-" || code.text() == "") {
		return
	}
	c.nested(sc, text, code, sc.lang)
}

// gitOptions checks git's global options for configuration that changes
// what git runs: git -c alias.p=push p is git push, and core.sshCommand,
// core.pager, core.fsmonitor, diff.external, filters, credential helpers,
// include.path and many more name programs. Only keys known to name no
// program pass.
func (c *classifier) gitOptions(text string, args []field) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text()
		if a.static() && t == "config" {
			c.gitConfigCommand(text, args[i+1:])
			return
		}
		if !a.static() || !isOption(t) {
			return // the subcommand, or a word only known at run time
		}
		switch name, val, eq := strings.Cut(t, "="); {
		case t == "-c" || t == "--config-env":
			if i+1 == len(args) {
				return
			}
			i++
			c.gitConfig(text, args[i])
		case name == "--config-env" && eq:
			c.gitConfig(text, field{raw: val})
		case name == "--exec-path" && eq:
			c.add(text, "git --exec-path runs git's commands from another directory")
		case t == "-C" || t == "--git-dir" || t == "--work-tree" || t == "--namespace" ||
			t == "--super-prefix" || t == "--list-cmds" || t == "--attr-source":
			i++ // the option's value
		}
	}
}

// safeGitConfig lists the git configuration keys (lower case; a trailing
// dot for a whole section) that name no program and cannot define one.
var safeGitConfig = []string{
	"color.", "advice.", "i18n.", "user.name", "user.email",
	"core.quotepath", "core.autocrlf", "core.safecrlf", "core.filemode",
	"core.abbrev", "core.ignorecase", "init.defaultbranch", "safe.directory",
	"commit.gpgsign", "tag.gpgsign", "pull.rebase", "pull.ff", "merge.ff",
	"gc.auto", "maintenance.auto", "protocol.version", "column.ui",
}

// safeGitValues lists values that turn a program-naming key off: git -c
// core.pager=cat log and git -c core.hooksPath=/dev/null commit are the
// usual ways to keep git from running anything.
var safeGitValues = map[string][]string{
	"core.pager":     {"cat", "", "false"},
	"core.fsmonitor": {"false", "", "0", "no", "off"},
	"core.hookspath": {"/dev/null"},
}

// gitConfig checks one -c KEY=VALUE (or --config-env KEY=ENVVAR).
func (c *classifier) gitConfig(text string, kv field) {
	key, value, _ := strings.Cut(kv.raw, "=")
	c.gitConfigKey(text, field{raw: key}, field{raw: value})
}

// gitConfigKey says dangerous unless key names no program, or value turns
// the program off.
func (c *classifier) gitConfigKey(text string, key, value field) {
	if !key.static() {
		c.add(text, reasonDynamicGitConf)
		return
	}
	k := strings.ToLower(key.text())
	for _, safe := range safeGitConfig {
		if k == safe || strings.HasSuffix(safe, ".") && strings.HasPrefix(k, safe) {
			return
		}
	}
	section := k
	if strings.HasPrefix(k, "pager.") {
		section = "core.pager"
	}
	if value.static() && slices.Contains(safeGitValues[section], strings.ToLower(value.text())) {
		return
	}
	c.add(text, fmt.Sprintf("sets git config %s, which can change what git runs", k))
}

// gitConfigCommand checks git config KEY VALUE (and git config set KEY
// VALUE) for an alias: git config alias.p push && git p is git push.
// Other keys that name programs are the sandbox's to guard (the
// repository's config is protected), and reading (a key alone, get, list,
// --get...) is harmless.
func (c *classifier) gitConfigCommand(text string, args []field) {
	spec := optSpec{value: "f", valueLong: []string{"--file", "--blob", "--type", "--default", "--comment", "--value", "--url"}, permute: true}
	opts, operands := scanOptions(args, spec)
	for _, o := range opts {
		if strings.HasPrefix(o.name, "--get") || strings.HasPrefix(o.name, "--unset") ||
			o.name == "--list" || o.name == "-l" || o.name == "--remove-section" || o.name == "--rename-section" {
			return
		}
	}
	if len(operands) > 0 && operands[0].static() {
		switch operands[0].text() {
		case "set":
			operands = operands[1:]
		case "get", "list", "unset", "remove-section", "rename-section", "edit":
			return
		}
	}
	if len(operands) < 2 {
		return
	}
	if key := operands[0]; !key.static() || strings.HasPrefix(strings.ToLower(key.text()), "alias.") {
		c.gitConfigKey(text, key, operands[1])
	}
}

// programVariables name a program or library that other programs run or
// load: GIT_SSH_COMMAND='sh -c …' git fetch runs the shell, LD_PRELOAD
// loads code into every program. A name ending in "*" is a prefix.
var programVariables = []string{
	"GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR",
	"GIT_SEQUENCE_EDITOR", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND",
	"GIT_EXEC_PATH", "GIT_DIR", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
	"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_*", "GIT_CONFIG_VALUE_*",
	"GIT_TEMPLATE_DIR", "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH",
	"DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND",
	"PAGER", "EDITOR", "VISUAL", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "PYTHONSTARTUP",
	"LESSOPEN", "LESSCLOSE", "MANPAGER", "BROWSER",
}

// programVariable reports whether name is one of programVariables.
func programVariable(name string) bool {
	for _, v := range programVariables {
		if v == name || strings.HasSuffix(v, "*") && strings.HasPrefix(name, strings.TrimSuffix(v, "*")) {
			return true
		}
	}
	return false
}

// setsVariable checks NAME=VALUE, wherever it stands: before a command,
// alone, after export or declare, or as an argument of env or sudo.
func (c *classifier) setsVariable(text, name string, value field) {
	if !programVariable(name) {
		return
	}
	if strings.HasSuffix(name, "PAGER") && value.static() && (value.text() == "cat" || value.text() == "") {
		return
	}
	c.add(text, fmt.Sprintf("sets %s, which can change what runs", name))
}

// assign checks one shell assignment.
func (c *classifier) assign(sc scope, a *syntax.Assign) {
	text := sc.text(a)
	if a.Name != nil {
		var value field
		if a.Value != nil {
			value = resolve(a.Value)
		}
		c.setsVariable(text, a.Name.Value, value)
		return
	}
	// declare/export with a word the parser could not split: "NAME=VALUE"
	// in quotes, or "$x" that may be any assignment.
	if a.Value == nil {
		return
	}
	f := resolve(a.Value)
	if isOption(f.text()) && f.static() {
		return
	}
	name, value, ok := strings.Cut(f.raw, "=")
	switch {
	case strings.Contains(name, dynMark):
		c.add(text, reasonDynamicEnv)
	case ok:
		c.setsVariable(text, name, field{raw: value})
	}
}

// envAssignments checks the NAME=VALUE words of env and sudo.
func (c *classifier) envAssignments(text string, args []field) {
	for _, a := range args {
		if isAssignment(a) {
			name, value, _ := strings.Cut(a.raw, "=")
			c.setsVariable(text, name, field{raw: value})
		}
	}
}

// ranFile is a file the command line runs: ./build.sh, bash x.sh, python3
// x.py, source x.sh.
type ranFile struct {
	text string // the command, for display
	base string // the file's base name
}

// runs records that the command text runs the file f, a script or
// program; a file only known at run time cannot be looked at at all.
func (c *classifier) runs(text string, f field) {
	base := path.Base(f.raw)
	if f.glob || strings.Contains(base, dynMark) {
		c.add(text, reasonDynamicScript)
		return
	}
	// /dev/stdin, /dev/fd/0, /proc/self/fd/0: the file is the input.
	if p := path.Clean(f.raw); strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc/") {
		c.add(text, reasonStdinProgram)
		return
	}
	c.ran = append(c.ran, ranFile{text: text, base: base})
}

// noteWord counts one static word of the command line by its base name.
func (c *classifier) noteWord(f field) {
	if f.static() && f.raw != "" {
		c.words[path.Base(f.raw)]++
	}
}

// noteWrite counts the target of a redirection that writes, and notes a
// target only known at run time.
func (c *classifier) noteWrite(r *syntax.Redirect) {
	if r.Word == nil || r.Op == syntax.DplOut {
		return
	}
	f := resolve(r.Word)
	if !f.static() || f.glob {
		c.dynamicWrite = true
		return
	}
	c.noteWord(f)
}

// writtenFiles reports each file the command line runs that it may also
// have written: printf 'git push' > x.sh; bash x.sh. The writer is not
// identified (redirections, tee, cp, curl -o, tar, a compiler…): a file
// named anywhere else on the line, or any write to a path only known at
// run time, is enough. It runs once the whole line has been read.
func (c *classifier) writtenFiles() {
	for _, r := range c.ran {
		if c.words[r.base] > 1 || c.dynamicWrite {
			c.add(r.text, reasonWrittenFile)
		}
	}
}
