package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/spf13/cobra"
)

type profileReport struct {
	Mode               sandbox.Mode                `json:"mode"`
	Backend            string                      `json:"backend"`
	Argv               []string                    `json:"argv"`
	Env                []string                    `json:"env,omitempty"`
	Enforcement        sandbox.Enforcement         `json:"enforcement"`
	Unenforced         []string                    `json:"unenforced,omitempty"`
	DenialSignatures   []string                    `json:"denial_signatures,omitempty"`
	RunnerFailureRules []sandbox.RunnerFailureRule `json:"runner_failure_rules,omitempty"`
}

func newProfileCmd() *cobra.Command {
	var f sandboxFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "profile [flags] [-- CMD [ARGS...]]",
		Short: "the confined argv and rules for a mode (runs nothing)",
		Long: `Show the argv a command would run under in this mode, with the backend's
rules (bwrap's flags, the helper's Landlock and seccomp arguments, the
Seatbelt profile), for CMD or a placeholder bash -c COMMAND. Nothing runs.`,
		Example: `  cordon profile --mode read-only
  cordon profile --json --backend landlock -- make test`,
		RunE: func(cmd *cobra.Command, argv []string) error {
			return runProfile(&f, asJSON, argv, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.register(cmd, false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	takesCommand(cmd)
	return cmd
}

// runProfile shows the confined argv a mode produces, for argv or a
// placeholder command, without running anything.
func runProfile(f *sandboxFlags, asJSON bool, argv []string, stdout, stderr io.Writer) error {
	if len(argv) == 0 {
		argv = []string{"bash", "-c", "COMMAND"}
	}
	d, err := f.resolve()
	if err != nil {
		return err
	}
	d.warnings(func(msg string) { fmt.Fprintf(stderr, "cordon: warning: %s\n", msg) })
	svc := sandbox.PolicyService{Settings: d.settings}
	pol, err := svc.Resolve(sandbox.Request{TmpDir: ""})
	if err != nil {
		return err
	}
	confined, err := d.executor(nil).Prepare(argv, pol)
	if err != nil {
		fmt.Fprintf(stderr, "cordon: sandbox unavailable: %v\n", trimUnavailable(err))
		return exitCode(exitSandbox)
	}
	confined.Cleanup()
	rep := profileReport{Mode: pol.Mode, Backend: confined.Backend, Argv: confined.Argv, Env: confined.Env,
		Enforcement: confined.Enforcement, Unenforced: confined.Unenforced,
		DenialSignatures: confined.DenialSignatures, RunnerFailureRules: confined.RunnerFailureRules}
	if asJSON {
		writeJSON(stdout, rep)
		return nil
	}
	fmt.Fprintf(stdout, "# mode %s, backend %s, enforcement %s\n", rep.Mode, rep.Backend, rep.Enforcement)
	for _, u := range rep.Unenforced {
		fmt.Fprintf(stdout, "# not enforced by the OS: %s\n", u)
	}
	fmt.Fprintln(stdout, shellQuote(rep.Argv))
	return nil
}

func shellQuote(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '/' || r == '-' || r == '_' || r == '.' || r == '=' || r == ':' ||
				(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
		}) < 0 {
			parts[i] = a
		} else {
			parts[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(parts, " ")
}
