package tools

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/cordonhq/cordon/sandbox"
)

// StatusInput are the sandbox_status tool's arguments: none.
type StatusInput struct{}

// PolicyReport is a policy as sandbox_status and `cordon status --json`
// show it.
type PolicyReport struct {
	Mode            sandbox.Mode    `json:"mode"`
	WorkspaceRoot   string          `json:"workspace_root"`
	WritableRoots   []string        `json:"writable_roots"`
	ProtectedPaths  []string        `json:"protected_paths"`
	ReadDeny        []string        `json:"read_deny"`
	Network         sandbox.Network `json:"network"`
	AllowedDomains  []string        `json:"allowed_domains,omitempty" jsonschema:"network restricted: hosts the egress proxy lets through without asking (with those the human allowed for this session)"`
	DeniedDomains   []string        `json:"denied_domains,omitempty" jsonschema:"network restricted: hosts it always refuses"`
	NetworkEnforcer string          `json:"network_enforcer,omitempty" jsonschema:"network restricted: who keeps commands on the egress proxy"`
}

// NewPolicyReport reports pol, whose commands run on backend ("" when
// none works).
func NewPolicyReport(pol sandbox.ExecutionPolicy, backend string) PolicyReport {
	r := PolicyReport{Mode: pol.Mode, WorkspaceRoot: pol.WorkspaceRoot, WritableRoots: pol.WritableRoots,
		ProtectedPaths: pol.Protected, ReadDeny: pol.ReadDeny, Network: pol.Network}
	if pol.Network == sandbox.NetworkRestricted {
		r.AllowedDomains, r.DeniedDomains = pol.AllowedDomains, pol.DeniedDomains
		r.NetworkEnforcer = sandbox.EgressEnforcer(backend)
	}
	return r
}

// StatusOutput is the sandbox_status tool's structuredContent.
type StatusOutput struct {
	PolicyReport
	ProxyIgnored    string              `json:"proxy_ignored,omitempty" jsonschema:"network restricted: what a program that ignores the proxy variables gets"`
	Secrets         []secrets.Info      `json:"secrets,omitempty" jsonschema:"credentials the commands use through sentinels: each one's name, the variable holding its sentinel, the hosts the egress proxy sends the real value to (never the value)"`
	Backend         string              `json:"backend"`
	Enforcement     sandbox.Enforcement `json:"enforcement"`
	Status          string              `json:"status"`
	Approval        approval.Policy     `json:"approval"`
	Preset          string              `json:"preset"`
	ClientRoots     []string            `json:"client_roots,omitempty" jsonschema:"the MCP client's roots, which may only narrow the writable roots"`
	ClientRootsNote string              `json:"client_roots_note,omitempty" jsonschema:"what the client's roots do: narrow the writable roots, or set aside because they hold none of them"`
	Unenforced      []string            `json:"unenforced,omitempty" jsonschema:"what the backend leaves to the FS fence (partial enforcement)"`
	Reason          string              `json:"reason,omitempty" jsonschema:"why the sandbox is unavailable"`
	Refused         string              `json:"refused,omitempty" jsonschema:"why commands and file writes are refused under this policy (a writable root holds the home directory), and the fix"`
	Warnings        []string            `json:"warnings,omitempty" jsonschema:"what the human should fix, each naming its cause (a relative PATH entry)"`
	// Processes is the session's background processes now running, and
	// ProcessesMax how many it may have.
	Processes    int `json:"background_processes" jsonschema:"background processes of this session now running (bash background: true)"`
	ProcessesMax int `json:"background_processes_max"`
}

// Status reports the session's effective policy and the backend, so the
// model knows where it may write and how to ask for more.
func (tb *Toolbox) Status(_ context.Context, call Call, _ StatusInput) (*Result, *ToolError) {
	call = tb.pin(call)
	pol, terr := tb.resolve(call, "")
	if terr != nil {
		return nil, terr
	}
	st := call.conf().Executor.Status()
	enforcement := st.Enforcement
	if pol.IsDanger() {
		enforcement = "none"
	}
	fields := StatusOutput{
		PolicyReport: NewPolicyReport(pol, st.Backend),
		Backend:      st.Backend, Enforcement: enforcement, Status: st.State,
		Approval: call.conf().Gate.Policy, Preset: call.conf().Preset,
		Unenforced: st.Unenforced, Reason: st.Reason,
		Processes: len(call.Session.procs().running()), ProcessesMax: call.conf().ProcessesMax,
	}
	fields.ClientRoots, _ = call.Session.ClientRoots()
	fields.ClientRootsNote = rootsNote(pol, fields.ClientRoots)
	if err := pol.Refusal(); err != nil {
		fields.Refused = strings.TrimPrefix(err.Error(), "sandbox unavailable: ")
	}
	fields.Warnings = sandbox.PathWarnings(os.Getenv("PATH"))
	if pol.Network == sandbox.NetworkRestricted {
		fields.ProxyIgnored = sandbox.ProxyIgnored(st.Backend)
		fields.Secrets = secrets.Describe(call.conf().Secrets)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mode: %s (preset %s, approval %s)\n", pol.Mode, call.conf().Preset, call.conf().Gate.Policy)
	fmt.Fprintf(&b, "sandbox: %s, backend %s, enforcement %s\n", st.State, st.Backend, enforcement)
	if st.Reason != "" {
		fmt.Fprintf(&b, "  reason: %s\n", st.Reason)
	}
	for _, u := range st.Unenforced {
		fmt.Fprintf(&b, "  not enforced by the OS: %s\n", u)
	}
	if fields.Refused != "" {
		fmt.Fprintf(&b, "REFUSED: %s\n", fields.Refused)
	}
	for _, w := range fields.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	fmt.Fprintf(&b, "workspace: %s\n", pol.WorkspaceRoot)
	fmt.Fprintf(&b, "writable roots: %s\n", strings.Join(pol.WritableRoots, ", "))
	if fields.ClientRootsNote != "" {
		fmt.Fprintf(&b, "  %s\n", fields.ClientRootsNote)
	}
	fmt.Fprintf(&b, "network: %s\n", pol.Network)
	if pol.Network == sandbox.NetworkRestricted {
		fmt.Fprintf(&b, "  allowed domains: %s\n", listOrNone(pol.AllowedDomains))
		fmt.Fprintf(&b, "  denied domains: %s\n", listOrNone(pol.DeniedDomains))
		fmt.Fprintf(&b, "  enforced by: %s\n", fields.NetworkEnforcer)
		fmt.Fprintf(&b, "  programs that ignore the proxy: %s\n", fields.ProxyIgnored)
		for _, sec := range fields.Secrets {
			fmt.Fprintf(&b, "  secret %s: $%s holds a sentinel, not the value; the egress proxy puts the real value in place of the sentinel in HTTPS requests to %s only (headers%s) and refuses a request that carries it anywhere else\n",
				sec.Name, sec.Env, strings.Join(sec.Hosts, ", "), map[bool]string{true: ", the URL", false: ""}[sec.InjectURL]+map[bool]string{true: ", bodies", false: ""}[sec.InjectBody])
		}
		for _, sec := range call.conf().Secrets {
			if len(sec.Files) > 0 {
				fmt.Fprintf(&b, "  secret %s files %s: %s\n", sec.Name, strings.Join(sec.Files, ", "), sandbox.SecretFilesSeen(st.Backend))
			}
		}
	}
	fmt.Fprintf(&b, "protected (read-only even in workspace-write): %s\n", strings.Join(pol.Protected, ", "))
	fmt.Fprintf(&b, "read-deny (never readable): %s\n", strings.Join(pol.ReadDeny, ", "))
	fmt.Fprintf(&b, "background processes: %d running of at most %d (bash background: true; process_output, process_input, process_kill, process_list)\n",
		fields.Processes, fields.ProcessesMax)
	return &Result{Text: b.String(), Structured: structured(fields)}, nil
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return strings.Join(l, ", ")
}
