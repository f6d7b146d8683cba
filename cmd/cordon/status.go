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

// statusReport is `cordon status --json`.
type statusReport struct {
	sandbox.Status
	Requirement sandbox.Requirement `json:"sandbox"`
	Policy      policyReport        `json:"policy"`
}

type policyReport struct {
	Mode           sandbox.Mode    `json:"mode"`
	WorkspaceRoot  string          `json:"workspace_root"`
	WritableRoots  []string        `json:"writable_roots"`
	ProtectedPaths []string        `json:"protected_paths"`
	ReadDeny       []string        `json:"read_deny"`
	Network        sandbox.Network `json:"network"`
}

func newPolicyReport(p sandbox.ExecutionPolicy) policyReport {
	return policyReport{Mode: p.Mode, WorkspaceRoot: p.WorkspaceRoot, WritableRoots: p.WritableRoots,
		ProtectedPaths: p.Protected, ReadDeny: p.ReadDeny, Network: p.Network}
}

func runStatus(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("status", stderr)
	var f sandboxFlags
	f.register(fs, true)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		return report(stderr, "status", usagef("unexpected argument %q", fs.Arg(0)))
	}
	d, err := f.resolve()
	if err != nil {
		return report(stderr, "status", err)
	}
	svc := sandbox.PolicyService{Settings: d.settings}
	pol, err := svc.Resolve(sandbox.Request{})
	if err != nil {
		return report(stderr, "status", err)
	}
	st := d.executor(nil).Status()
	rep := statusReport{Status: st, Requirement: d.requirement, Policy: newPolicyReport(pol)}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		printStatus(stdout, rep)
	}
	if st.State == sandbox.StateUnavailable {
		return exitFailure
	}
	return exitOK
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
	for _, t := range r.Tried {
		if !t.OK {
			fmt.Fprintf(w, "  %s: %s\n", t.Backend, t.Reason)
		}
	}
	fmt.Fprintf(w, "sandbox:      %s\n", r.Requirement)
	p := r.Policy
	fmt.Fprintf(w, "mode:         %s\n", p.Mode)
	fmt.Fprintf(w, "workspace:    %s\n", p.WorkspaceRoot)
	fmt.Fprintf(w, "network:      %s\n", p.Network)
	fmt.Fprintf(w, "writable:     %s\n", strings.Join(p.WritableRoots, ", "))
	fmt.Fprintf(w, "protected:    %d paths (see --json)\n", len(p.ProtectedPaths))
	fmt.Fprintf(w, "read-deny:    %s\n", strings.Join(p.ReadDeny, ", "))
}
