// Package approval is cordon's first gate: it decides whether a tool call
// proceeds, is refused, or waits for the human. The second gate, the
// sandbox, decides what the call can touch; the two are orthogonal, so this
// package never looks at paths or modes beyond reporting them.
//
// Four things live here:
//
//   - Policy: how often the human is asked (never, on-request,
//     ask-dangerous, always), and Decide, which the tool layer calls before
//     every call that can write.
//   - Preset: the named pairs of sandbox mode and policy (safe, review,
//     danger), and Derive, which turns what the human configured into the
//     effective mode, policy and the preset name to report.
//   - Classify: the dangerous-command classifier behind ask-dangerous. It
//     parses the command with a real shell parser (mvdan.cc/sh/v3/syntax,
//     bash dialect) and checks every simple command it can find against a
//     list of Rules that is data: DefaultRules plus rules from the config,
//     written in the small syntax ParseRule accepts. rules.md lists the
//     defaults and the built-in checks.
//   - Show: what the human reads when asked (ShowText, ShowLine). Every
//     character of the command, path or input is visible (control, bidi and
//     zero-width characters as ⟨…⟩ markers), runs are collapsed visibly, and
//     nothing is cut: a text that does not Fit is refused before anyone is
//     asked.
//
// # Limits
//
// The classifier sees the text of one command line, not the programs it
// starts. It cannot see inside scripts written by an earlier call and run
// from files (./build.sh, make, npm run), git aliases and hooks already in
// a config file, or programs that run other programs named in their own
// configuration (~/.ssh/config, a Makefile). Arguments that are only known at run time
// ($FLAGS) are not treated as options. It is consent, not a boundary: the
// sandbox is the boundary. Where it cannot tell what runs (a command that
// does not parse; a command name, subcommand or nested script only known at
// run time; a function or alias; arguments supplied by xargs; a program
// fed to a shell's input; inline interpreter, awk or sed code that can
// start programs; a file the same line writes; git config or a variable
// that names a program: hidden.go, textcode.go, optprograms.go) it
// says dangerous, so that under ask-dangerous the human decides.
package approval
