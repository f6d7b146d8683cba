package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/spf13/cobra"
)

type profileReport struct {
	// Class, ClassDir, WritableRoots and Network describe a `cordon wrap`
	// spawn class (profile --class).
	Class              string                      `json:"class,omitempty"`
	ClassDir           string                      `json:"class_dir,omitempty"`
	WritableRoots      []string                    `json:"writable_roots"`
	Network            sandbox.Network             `json:"network"`
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
	var w wrapFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "profile [flags] [-- CMD [ARGS...]]",
		Short: "the confined argv and rules for a mode (runs nothing)",
		Long: `Show the argv a command would run under in this mode, with the backend's
rules (bwrap's flags, the helper's Landlock and seccomp arguments, the
Seatbelt profile), for CMD or a placeholder bash -c COMMAND. Nothing runs.
With --class, the policy cordon wrap gives CMD in that spawn class.`,
		Example: `  cordon profile --mode read-only
  cordon profile --json --backend landlock -- make test
  cordon profile --class mcp_server -- npx -y @modelcontextprotocol/server-github`,
		RunE: func(cmd *cobra.Command, argv []string) error {
			return runProfile(&f, &w, asJSON, argv, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.register(cmd, false)
	w.register(cmd, "")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	takesCommand(cmd)
	return cmd
}

// runProfile shows the confined argv a mode produces, for argv or a
// placeholder command, without running anything.
func runProfile(f *sandboxFlags, w *wrapFlags, asJSON bool, argv []string, stdout, stderr io.Writer) error {
	if len(argv) == 0 {
		argv = []string{"bash", "-c", "COMMAND"}
	}
	d, err := f.resolve()
	if err != nil {
		return err
	}
	d.warnings(func(msg string) { fmt.Fprintf(stderr, "cordon: warning: %s\n", msg) })
	set, classDir := d.settings, ""
	if w.class != "" {
		if set, classDir, err = classSettings(d, f, w, argv); err != nil {
			return err
		}
	}
	svc := sandbox.PolicyService{Settings: set}
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
	rep := profileReport{Class: w.class, ClassDir: classDir, WritableRoots: pol.WritableRoots, Network: pol.Network, Mode: pol.Mode, Backend: confined.Backend, Argv: confined.Argv, Env: confined.Env,
		Enforcement: confined.Enforcement, Unenforced: confined.Unenforced,
		DenialSignatures: confined.DenialSignatures, RunnerFailureRules: confined.RunnerFailureRules}
	if asJSON {
		writeJSON(stdout, rep)
		return nil
	}
	if rep.Class != "" {
		fmt.Fprintf(stdout, "# class %s: writes only %s; network %s\n", rep.Class, strings.Join(rep.WritableRoots, ", "), rep.Network)
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
