package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/internal/config"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/spf13/cobra"
)

// statusReport is `cordon status --json`.
type statusReport struct {
	sandbox.Status
	Requirement sandbox.Requirement `json:"sandbox"`
	Policy      policyReport        `json:"policy"`
	Approval    approval.Policy     `json:"approval"`
	Preset      approval.Preset     `json:"preset"`
	// Rules says, rule by rule, who enforces the policy for commands.
	Rules []ruleReport `json:"rules"`
	// Guarded are the protected paths the backend cannot keep read-only
	// while a command runs: restored after it instead (the window while it
	// runs remains). Seccomp lists the system-call rules of the filter.
	Guarded []string `json:"guarded_paths"`
	Seccomp []string `json:"seccomp"`
	// Refused says why the backend refuses to confine commands under this
	// policy at all (a Landlock workspace that contains cordon's config).
	Refused string `json:"refused,omitempty"`
	// PathWarnings name each relative entry of the PATH cordon runs with:
	// a program a command writes there in the workspace runs as the
	// human's own command next.
	PathWarnings []string `json:"path_warnings"`
	// ReadDeny is the read-deny list of the home as data, each entry with
	// the tool whose secret it holds.
	ReadDeny []readDenyReport `json:"read_deny_entries"`
	// Classes are the spawn classes of cordon wrap, as the config sets
	// them (cordon profile --class CLASS shows one in full).
	Classes map[string]classReport `json:"wrap_classes"`
	Config  configReport           `json:"config"`
	// Secrets are the [secrets] tables: where each value is read, where
	// the sandbox sees its sentinel, its hosts; never a value.
	Secrets []config.SecretSpec `json:"secrets"`
}

type readDenyReport struct {
	Path string `json:"path"`
	Tool string `json:"tool"`
}

func newReadDenyReports() []readDenyReport {
	out := make([]readDenyReport, 0, len(sandbox.ReadDenyEntries))
	for _, e := range sandbox.ReadDenyEntries {
		out = append(out, readDenyReport{Path: "~/" + e.Path, Tool: e.Tool})
	}
	return out
}

type classReport struct {
	Writes         string          `json:"writes"`
	Network        sandbox.Network `json:"network"`
	AllowedDomains []string        `json:"allowed_domains"`
	ExtraWrite     []string        `json:"extra_write_allow"`
}

func newClassReports(d deployment) map[string]classReport {
	out := map[string]classReport{}
	for _, class := range classNames {
		prof := d.classes[class]
		writes := filepath.Join(d.settings.StateDir, "wrap", "NAME") + ", the workspace with --mode workspace-write, --writable DIR"
		if class == classExternalAgent {
			writes += "; its config home: " + filepath.Join(d.settings.StateDir, "wrap", "NAME", "{claude,codex}")
		}
		out[class] = classReport{Writes: writes, Network: prof.network,
			AllowedDomains: slices.Concat(d.settings.AllowedDomains, prof.allowed),
			ExtraWrite:     slices.Concat(d.settings.ExtraWriteAllow, prof.writable)}
	}
	return out
}

// policyReport is the policy as sandbox_status shows it, and the
// repositories it protects.
type policyReport struct {
	tools.PolicyReport
	// Repositories are the gitdirs whose hooks and configuration are
	// protected; RepoScanIncomplete says the search stopped early.
	Repositories       []string `json:"repositories"`
	RepoScanIncomplete bool     `json:"repository_scan_incomplete,omitempty"`
}

// configReport is where every value came from: the files read, each
// setting with its origin, and the workspace widenings that were dropped.
type configReport struct {
	Files    []config.File             `json:"files"`
	Settings map[string]config.Setting `json:"settings"`
	Warnings []config.Warning          `json:"warnings"`
	ordered  []config.Setting
}

// ruleReport is one rule of the policy and who enforces it for commands:
// os (the backend, and the FS fence for the file tools), fence (the file
// tools only), guard (restored after each command: the guard undoes what a
// command wrote), partial (the OS enforces part of it; Detail says which),
// none (commands run unconfined) or fail-closed (no backend: confined
// commands are refused).
type ruleReport struct {
	Rule     string `json:"rule"`
	Enforced string `json:"enforced"`
	Detail   string `json:"detail,omitempty"`
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return strings.Join(l, ", ")
}

func newPolicyReport(p sandbox.ExecutionPolicy, backend string) policyReport {
	r := policyReport{PolicyReport: tools.NewPolicyReport(p, backend),
		Repositories: []string{}, RepoScanIncomplete: p.RepoScanIncomplete}
	for _, repo := range p.Repos {
		if repo.GitDir != "" {
			r.Repositories = append(r.Repositories, repo.GitDir)
		}
	}
	return r
}

func newConfigReport(c *config.Config) configReport {
	r := configReport{Files: c.Files, Settings: map[string]config.Setting{}, Warnings: c.Warnings, ordered: c.Settings()}
	for _, s := range r.ordered {
		r.Settings[s.Key] = s
	}
	if r.Files == nil {
		r.Files = []config.File{}
	}
	if r.Warnings == nil {
		r.Warnings = []config.Warning{}
	}
	return r
}

// enforcementRules maps the backend's Unenforced list onto the policy's
// rules, so that a partial backend says which rule it leaves to whom.
func enforcementRules(st sandbox.Status, pol sandbox.ExecutionPolicy) []ruleReport {
	names := []string{"writes outside the writable roots", "protected paths", "read-deny list", "private /tmp"}
	switch pol.Network {
	case sandbox.NetworkDeny:
		names = append(names, "network deny")
	case sandbox.NetworkRestricted:
		names = append(names, "network restricted")
	}
	var rules []ruleReport
	all := func(enforced, detail string) []ruleReport {
		for _, n := range names {
			rules = append(rules, ruleReport{Rule: n, Enforced: enforced, Detail: detail})
		}
		return rules
	}
	switch {
	case pol.IsDanger():
		return all("none", "danger-full-access runs commands unconfined")
	case st.State == sandbox.StateBypassed:
		return all("none", "the sandbox is off: commands run unconfined")
	case st.State != sandbox.StateActive:
		return all("fail-closed", "no backend works: confined commands are refused with SANDBOX_UNAVAILABLE")
	}
	used := make([]bool, len(st.Unenforced))
	for _, n := range names {
		r := ruleReport{Rule: n, Enforced: "os"}
		for i, u := range st.Unenforced {
			if strings.HasPrefix(u, n+":") {
				used[i] = true
				r.Enforced, r.Detail = unenforcedKind(u), strings.TrimSpace(strings.TrimPrefix(u, n+":"))
			}
		}
		rules = append(rules, r)
	}
	for i, u := range st.Unenforced {
		if !used[i] {
			name, detail := splitRule(u)
			rules = append(rules, ruleReport{Rule: name, Enforced: unenforcedKind(u), Detail: detail})
		}
	}
	return rules
}

// splitRule splits an Unenforced entry, "RULE: DETAIL", at the first colon
// outside parentheses.
func splitRule(u string) (rule, detail string) {
	depth := 0
	for i, r := range u {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case r == ':' && depth == 0:
			return u[:i], strings.TrimSpace(u[i+1:])
		}
	}
	return u, ""
}

// unenforcedKind says who enforces a rule a backend names: partly the OS,
// the guard (restored after each command), or the FS fence alone.
func unenforcedKind(u string) string {
	switch {
	case strings.Contains(u, "refused by the OS"):
		return "partial"
	case strings.Contains(u, "guarded"):
		return "guard"
	case strings.Contains(u, "FS fence"):
		return "fence"
	}
	return "partial"
}

func newStatusCmd() *cobra.Command {
	var f sandboxFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status [flags]",
		Short: "backend, probe, enforcement, policy and where every setting came from",
		Long: `Show the sandbox backend this machine would use and whether its probe
passed, what it enforces, the policy commands run under, and where every
setting came from. Exit 1 when no backend works (or the policy is refused).

With --json the output is always one JSON document, also on failure: a
broken config file or a bad command line gives {"status": "unavailable",
"error": ...} (exit 1 for the config, naming FILE:LINE; 2 for the command
line).`,
		Args:        noArgs,
		Annotations: map[string]string{jsonFailures: "true"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStatus(&f, asJSON, cmd.OutOrStdout())
		},
	}
	f.register(cmd, true)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document, also on failure")
	return cmd
}

func runStatus(f *sandboxFlags, asJSON bool, stdout io.Writer) error {
	d, err := f.resolve()
	if err != nil {
		return err
	}
	svc := sandbox.PolicyService{Settings: d.settings}
	pol, err := svc.Resolve(sandbox.Request{})
	if err != nil {
		return err
	}
	ex := d.executor(nil)
	st := ex.Status()
	rep := statusReport{Status: st, Requirement: d.requirement, Policy: newPolicyReport(pol, st.Backend),
		Approval: d.posture.Approval, Preset: d.posture.Preset,
		Rules: enforcementRules(st, pol), Guarded: []string{}, Seccomp: []string{}, Config: newConfigReport(d.cfg),
		Classes: newClassReports(d), PathWarnings: sandbox.PathWarnings(os.Getenv("PATH")), ReadDeny: newReadDenyReports()}
	if rep.PathWarnings == nil {
		rep.PathWarnings = []string{}
	}
	rep.Secrets = append([]config.SecretSpec{}, d.cfg.Secrets...)
	if st.State == sandbox.StateActive && pol.Mode.Confined() {
		rep.Seccomp = sandbox.SeccompRules(st.Backend, pol.Network, pol.Mode)
		// What a command would run under here: planning has no side
		// effects until a launch starts.
		if c, err := ex.Prepare([]string{"true"}, pol); err != nil {
			rep.Refused = trimUnavailable(err)
		} else {
			rep.Guarded = append(rep.Guarded, c.Guarded()...)
		}
	}
	if err := pol.Refusal(); err != nil && rep.Refused == "" {
		rep.Refused = trimUnavailable(err)
	}
	if asJSON {
		writeJSON(stdout, rep)
	} else {
		printStatus(stdout, rep)
	}
	if st.State == sandbox.StateUnavailable || rep.Refused != "" {
		return exitCode(exitFailure)
	}
	return nil
}

// statusFailure is `cordon status --json` when there is no status to
// report: a config file is broken, the command line is wrong, or the
// policy cannot be resolved. Its status is "unavailable", as for a sandbox
// that does not work, so that a reader of .status has one case to handle.
type statusFailure struct {
	State string `json:"status"`
	Error string `json:"error"`
	// Problems are a broken configuration's, each FILE:LINE: key: what
	// is wrong and how to fix it.
	Problems []string `json:"problems,omitempty"`
}

// writeStatusFailure prints err as a statusFailure and returns the exit
// code: 1 for a broken config (the state status reports on), 2 for a bad
// command line, 1 for any other failure.
func writeStatusFailure(w io.Writer, err error) int {
	rep := statusFailure{State: sandbox.StateUnavailable, Error: err.Error()}
	code := exitFailure
	var ce *config.Error
	var ue *usageError
	switch {
	case errors.As(err, &ce):
		rep.Problems = ce.Problems
	case errors.As(err, &ue):
		code = exitUsage
	}
	writeJSON(w, rep)
	return code
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func printStatus(w io.Writer, r statusReport) {
	fmt.Fprintf(w, "status:       %s\n", r.State)
	backend := r.Backend
	if r.Version != "" {
		backend += " " + r.Version
	}
	fmt.Fprintf(w, "backend:      %s\n", backend)
	fmt.Fprintf(w, "enforcement:  %s\n", r.Enforcement)
	for _, u := range r.Unenforced {
		fmt.Fprintf(w, "  not enforced by the OS: %s\n", u)
	}
	if r.State == sandbox.StateActive {
		fmt.Fprintf(w, "probe:        passed in %.1f ms\n", float64(r.Probe.Microseconds())/1000)
	}
	if r.Reason != "" {
		fmt.Fprintf(w, "reason:       %s\n", r.Reason)
	}
	if r.Refused != "" {
		fmt.Fprintf(w, "commands:     REFUSED here: %s\n", r.Refused)
	}
	for _, warn := range r.PathWarnings {
		fmt.Fprintf(w, "warning:      %s\n", warn)
	}
	for _, t := range r.Tried {
		if !t.OK {
			fmt.Fprintf(w, "  %s: %s\n", t.Backend, t.Reason)
		}
	}
	fmt.Fprintf(w, "sandbox:      %s\n", r.Requirement)
	p := r.Policy
	fmt.Fprintf(w, "mode:         %s\n", p.Mode)
	fmt.Fprintf(w, "approval:     %s (preset %s)\n", r.Approval, r.Preset)
	fmt.Fprintf(w, "workspace:    %s\n", p.WorkspaceRoot)
	fmt.Fprintf(w, "network:      %s\n", p.Network)
	if p.Network == sandbox.NetworkRestricted {
		fmt.Fprintf(w, "  allowed:    %s\n", orNone(p.AllowedDomains))
		fmt.Fprintf(w, "  denied:     %s\n", orNone(p.DeniedDomains))
		fmt.Fprintf(w, "  enforcer:   %s\n", p.NetworkEnforcer)
	}
	for _, sec := range r.Secrets {
		fmt.Fprintf(w, "secret:       %s\n", secretLine(sec, p.Network))
	}
	fmt.Fprintf(w, "writable:     %s\n", strings.Join(p.WritableRoots, ", "))
	fmt.Fprintf(w, "protected:    %d paths (see --json)\n", len(p.ProtectedPaths))
	fmt.Fprintf(w, "repositories: %d whose hooks and config are protected", len(p.Repositories))
	if p.RepoScanIncomplete {
		fmt.Fprintf(w, " (the search for nested repositories stopped: the tree is too large to guard, and no command runs in workspace-write; use a smaller workspace)")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "read-deny:    %s\n", strings.Join(p.ReadDeny, ", "))
	fmt.Fprintf(w, "credentials (read-deny list of the home; extra_read_deny adds to it):\n")
	for _, e := range r.ReadDeny {
		fmt.Fprintf(w, "  %s (%s)\n", e.Path, e.Tool)
	}
	if len(r.Guarded) > 0 {
		fmt.Fprintf(w, "guarded:      restored after each command, not refused while it runs:\n")
		for _, g := range r.Guarded {
			fmt.Fprintf(w, "  %s\n", g)
		}
	}
	if len(r.Seccomp) > 0 {
		fmt.Fprintf(w, "seccomp:\n")
		for _, rule := range r.Seccomp {
			fmt.Fprintf(w, "  %s\n", rule)
		}
	}

	fmt.Fprintf(w, "wrap classes (cordon wrap; cordon profile --class CLASS shows one):\n")
	for _, class := range classNames {
		c := r.Classes[class]
		fmt.Fprintf(w, "  %s: writes %s; network %s", class, c.Writes, c.Network)
		if c.Network == sandbox.NetworkRestricted {
			fmt.Fprintf(w, " (allowed: %s)", orNone(c.AllowedDomains))
		}
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "\nrules (who enforces them for commands):\n")
	for _, rule := range r.Rules {
		fmt.Fprintf(w, "  %s: %s", rule.Rule, rule.Enforced)
		if rule.Detail != "" {
			fmt.Fprintf(w, " (%s)", rule.Detail)
		}
		fmt.Fprintln(w)
	}

	c := r.Config
	fmt.Fprintf(w, "\nconfig files:")
	if len(c.Files) == 0 {
		fmt.Fprintf(w, " none")
	}
	fmt.Fprintln(w)
	for _, f := range c.Files {
		fmt.Fprintf(w, "  %s (%s)\n", f.Path, f.Layer)
	}
	fmt.Fprintf(w, "\nsettings (value, origin):\n")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, s := range c.ordered {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Key, s.Text, s.Origin)
		for _, e := range s.Entries {
			if e.Origin != s.Origin {
				fmt.Fprintf(tw, "  \t  %s\t%s\n", e.Value, e.Origin)
			}
		}
	}
	tw.Flush()
	if len(c.Warnings) > 0 {
		fmt.Fprintf(w, "\nwarnings (dropped from workspace files):\n")
		for _, warn := range c.Warnings {
			fmt.Fprintf(w, "  %s\n", warn)
		}
	}
}

// secretLine describes one secret for the human: where the command sees
// its sentinel, where the value may go, where cordon reads it.
func secretLine(s config.SecretSpec, n sandbox.Network) string {
	seen := "no variable"
	if s.Env != "" {
		seen = "sentinel in $" + s.Env
	}
	from := "env " + s.FromEnv
	switch {
	case s.FromFile != "":
		from = "file " + s.FromFile
	case len(s.FromCommand) > 0:
		from = "command " + strings.Join(s.FromCommand, " ")
	}
	line := fmt.Sprintf("%s (%s; sent to %s only; value from %s", s.Name, seen, strings.Join(s.Hosts, ", "), from)
	if s.InjectURL {
		line += "; the URL too"
	}
	if s.InjectBody {
		line += "; bodies too"
	}
	if len(s.Files) > 0 {
		line += "; files " + strings.Join(s.Files, ", ") + ": " + sandbox.SecretFilesSeen("")
	}
	line += ")"
	if n != sandbox.NetworkRestricted {
		line += " — in effect under network restricted only: commands now see neither it nor its sentinel"
	}
	return line
}
