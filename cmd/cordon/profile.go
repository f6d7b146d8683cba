package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cordonhq/cordon/sandbox"
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

// runProfile shows the confined argv a mode produces, for a placeholder
// command, without running anything.
func runProfile(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("profile", stderr)
	var f sandboxFlags
	f.register(fs, false)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := f.parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	argv := fs.Args()
	if len(argv) == 0 {
		argv = []string{"bash", "-c", "COMMAND"}
	}
	d, err := f.resolve()
	if err != nil {
		return report(stderr, "profile", err)
	}
	d.warnings(func(msg string) { fmt.Fprintf(stderr, "cordon: warning: %s\n", msg) })
	svc := sandbox.PolicyService{Settings: d.settings}
	pol, err := svc.Resolve(sandbox.Request{TmpDir: ""})
	if err != nil {
		return report(stderr, "profile", err)
	}
	confined, err := d.executor(nil).Prepare(argv, pol)
	if err != nil {
		fmt.Fprintf(stderr, "cordon: sandbox unavailable: %v\n", trimUnavailable(err))
		return exitSandbox
	}
	confined.Cleanup()
	rep := profileReport{Mode: pol.Mode, Backend: confined.Backend, Argv: confined.Argv, Env: confined.Env,
		Enforcement: confined.Enforcement, Unenforced: confined.Unenforced,
		DenialSignatures: confined.DenialSignatures, RunnerFailureRules: confined.RunnerFailureRules}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		return exitOK
	}
	fmt.Fprintf(stdout, "# mode %s, backend %s, enforcement %s\n", rep.Mode, rep.Backend, rep.Enforcement)
	for _, u := range rep.Unenforced {
		fmt.Fprintf(stdout, "# not enforced by the OS: %s\n", u)
	}
	fmt.Fprintln(stdout, shellQuote(rep.Argv))
	return exitOK
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
