package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// run parses args, runs the command they name and returns its exit code.
// The command tree is built here, not at init, so that the confinement
// helper (dispatched in main before run) never pays for it.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if args == nil {
		args = []string{} // cobra would read os.Args
	}
	root := newRoot()
	root.SetArgs(oneDashLongFlags(root, args))
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	if cmd == nil {
		cmd = root
	}
	return exitFor(cmd, args, err)
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "cordon",
		Short: "a sandboxed shell and file system for AI agents, over MCP",
		// Runnable, so that a bare `cordon` and an unknown command are
		// usage errors rather than help.
		Args: unknownCommand,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprint(cmd.ErrOrStderr(), usage)
			return exitCode(exitUsage)
		},
		SilenceErrors: true,
		SilenceUsage:  true,
		// SuggestionsFor offers nothing until this is set.
		SuggestionsMinimumDistance: 2,
		CompletionOptions:          cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.SetFlagErrorFunc(flagError)
	// --version as well as `cordon version`: people try the flag first.
	root.Version = versionLine()
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(newServeCmd(), newExecCmd(), newStatusCmd(), newProfileCmd(), newTestCmd(),
		newLogCmd(), newSessionsCmd(), newModeCmd(), newTokenCmd(), newWrapCmd(), newClientConfigCmd(), newCompletionCmd(), newVersionCmd())
	root.SetHelpCommand(newHelpCmd())
	commandHelp := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == root {
			fmt.Fprint(c.OutOrStdout(), usage)
			return
		}
		commandHelp(c, args)
	})
	return root
}

// newHelpCmd is `cordon help [COMMAND]`: cobra's own answers an unknown
// topic with the root's help and exit 0.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]",
		Short: "a command's usage and flags",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return syntaxf("give at most one command")
			}
			return nil
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []string
			for _, c := range cmd.Root().Commands() {
				if c.IsAvailableCommand() {
					names = append(names, c.Name()+"\t"+c.Short)
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			if len(args) == 0 {
				return root.Help()
			}
			c, _, err := root.Find(args)
			if err != nil || c == root {
				return unknownCommand(root, args)
			}
			return c.Help()
		},
	}
}

// exitCode ends a command with this code once it has said what it had to.
type exitCode int

func (c exitCode) Error() string { return "exit status " + strconv.Itoa(int(c)) }

// exitWith is nil for 0, else exitCode(code).
func exitWith(code int) error {
	if code == exitOK {
		return nil
	}
	return exitCode(code)
}

// usageError is a bad command line: exit 2, nothing run. A syntax error
// (an unknown flag, a missing argument) points to --help as well; cause is
// what a broken config file reported.
type usageError struct {
	msg    string
	syntax bool
	cause  error
}

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Unwrap() error { return e.cause }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

func syntaxf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), syntax: true}
}

// jsonFailures marks a command whose failures, with --json, are a JSON
// document on stdout instead of a message on stderr.
const jsonFailures = "cordon/json-failures"

// exitFor reports err, if any, the way cmd reports failures, and maps it
// to the exit code: 0 ok, 1 failure, 2 usage error, or the code a command
// chose (exec's command, 125).
func exitFor(cmd *cobra.Command, args []string, err error) int {
	var code exitCode
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &code):
		return int(code)
	case cmd.Annotations[jsonFailures] != "" && jsonRequested(args):
		return writeStatusFailure(cmd.OutOrStdout(), err)
	}
	stderr := cmd.ErrOrStderr()
	fmt.Fprintf(stderr, "%s: %v\n", cmd.CommandPath(), err)
	var ue *usageError
	if !errors.As(err, &ue) {
		return exitFailure
	}
	if ue.syntax {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return exitUsage
}

// jsonRequested reports whether the command line, read as far as "--",
// asks for --json: also when it could not be parsed, so that even a usage
// error comes as JSON.
func jsonRequested(args []string) bool {
	on := false
	for _, a := range args {
		if a == "--" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "json" {
			continue
		}
		on = true
		if hasVal {
			on, _ = strconv.ParseBool(val)
		}
	}
	return on
}

// flagError turns the flag parser's errors into usage errors. An unknown
// flag is named as it is spelled: --long or -s.
func flagError(_ *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if errors.As(err, &ne) {
		name := "--" + ne.GetSpecifiedName()
		if s := ne.GetSpecifiedShortnames(); s != "" {
			name = "-" + s
		}
		return syntaxf("unknown flag %s", name)
	}
	return syntaxf("%v", err)
}

// unknownCommand is the root's argument check: any argument is a command
// that does not exist.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q", args[0])
	if s := cmd.Root().SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return usagef("%s; 'cordon --help' lists the commands", msg)
}

// noArgs refuses positional arguments.
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return syntaxf("unexpected argument %q", args[0])
	}
	return nil
}

// takesCommand makes cmd's positional arguments a command line of its
// own: the first of them ends cordon's flags, so that CMD's flags pass
// through untouched (`cordon exec -- ls -la`, and `cordon exec ls -la`).
func takesCommand(cmd *cobra.Command) {
	cmd.Flags().SetInterspersed(false)
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[passThrough] = "true"
}

const passThrough = "cordon/pass-through"

// oneDashLongFlags rewrites -name and -name=value into --name for the long
// flags of the command args[0] names: the flag package cordon used before
// accepted them, cobra would read a cluster of one-letter flags. The value
// of a flag that takes one is left alone, and so is everything after "--"
// and, for a command that takes a command line, after its first argument.
func oneDashLongFlags(root *cobra.Command, args []string) []string {
	if len(args) < 2 {
		return args
	}
	cmd, _, err := root.Find(args[:1])
	if err != nil || cmd == root {
		return args
	}
	cmd.InitDefaultHelpFlag()
	fs := cmd.Flags()
	stopAtArg := cmd.Annotations[passThrough] != ""
	out := slices.Clone(args)
	for i := 1; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if stopAtArg {
				break
			}
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		fl := fs.Lookup(name)
		if fl == nil {
			continue
		}
		if a[1] != '-' && len(name) > 1 {
			out[i] = "-" + a
		}
		if !hasValue && fl.NoOptDefVal == "" {
			i++ // the next argument is this flag's value
		}
	}
	return out
}
