package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
	"github.com/spf13/cobra"
)

// The values the flags accept, offered by the completion scripts.
// TestCompletionValuesParse holds them to the parsers.
var (
	modeNames     = []string{string(sandbox.ReadOnly), string(sandbox.WorkspaceWrite), string(sandbox.DangerFullAccess)}
	networkNames  = []string{string(sandbox.NetworkAllow), string(sandbox.NetworkDeny), string(sandbox.NetworkRestricted)}
	backendNames  = []string{"auto", "bwrap", "landlock", "seatbelt", "windows-acl"}
	presetNames   = []string{string(approval.Safe), string(approval.Review), string(approval.Danger)}
	approvalNames = []string{string(approval.Never), string(approval.OnRequest), string(approval.AskDangerous), string(approval.Always)}
	logLevels     = []string{"debug", "info", "warn", "error"}
	shells        = []string{"bash", "zsh", "fish", "powershell"}
)

// newCompletionCmd is `cordon completion SHELL`. The scripts ask cordon
// itself (its hidden __complete command) what to offer, so they never go
// stale: commands, flags, the flags' values and the sessions under the
// state directory.
func newCompletionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "print a shell completion script",
		Long: `Print a script that completes cordon's commands, flags and their values,
and session ids, in the given shell. bash's script needs the
bash-completion package (apt-get install bash-completion, brew install
bash-completion@2).`,
		Example: `  bash:  source <(cordon completion bash)     # in ~/.bashrc
  zsh:   cordon completion zsh > "${fpath[1]}/_cordon"
  fish:  cordon completion fish > ~/.config/fish/completions/cordon.fish`,
		ValidArgs: shells,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return syntaxf("give one shell: %s", strings.Join(shells, ", "))
			}
			for _, s := range shells {
				if args[0] == s {
					return nil
				}
			}
			return syntaxf("unknown shell %q: use one of %s", args[0], strings.Join(shells, ", "))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			root, w := cmd.Root(), cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(w, true)
			case "zsh":
				return root.GenZshCompletion(w)
			case "fish":
				return root.GenFishCompletion(w, true)
			default:
				return root.GenPowerShellCompletionWithDesc(w)
			}
		},
	}
}

// completeValues offers values for flag name, and no file names.
func completeValues(cmd *cobra.Command, name string, values []string) {
	cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

// completeDirs offers directories for the flags named.
func completeDirs(cmd *cobra.Command, names ...string) {
	for _, n := range names {
		cmd.RegisterFlagCompletionFunc(n, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		})
	}
}

func completeTOML(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{"toml"}, cobra.ShellCompDirectiveFilterFileExt
}

func noCompletion(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// completeSessions offers the sessions under the state directory, newest
// last, each described by its mode and start.
func completeSessions(stateDir func() string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		list, _ := sessionlog.List(sessionsDir(stateDir()))
		out := make([]string, 0, len(list))
		for _, s := range list {
			out = append(out, fmt.Sprintf("%s\t%s, started %s", s.ID, s.Mode, s.Start.Local().Format(time.DateTime)))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
