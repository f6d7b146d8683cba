package tools

import (
	"fmt"
	"strings"
)

// Status reports the session's effective policy and the backend, so the
// model knows where it may write and how to ask for more.
func (tb *Toolbox) Status(call Call) (*Result, *ToolError) {
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
	fields := map[string]any{
		"mode": pol.Mode, "workspace_root": pol.WorkspaceRoot, "writable_roots": nonNil(pol.WritableRoots),
		"protected_paths": nonNil(pol.Protected), "read_deny": nonNil(pol.ReadDeny), "network": pol.Network,
		"backend": st.Backend, "enforcement": enforcement, "status": st.State,
		"approval": call.conf().Gate.Policy, "preset": call.conf().Preset,
	}
	if len(st.Unenforced) > 0 {
		fields["unenforced"] = st.Unenforced
	}
	if st.Reason != "" {
		fields["reason"] = st.Reason
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
	fmt.Fprintf(&b, "workspace: %s\n", pol.WorkspaceRoot)
	fmt.Fprintf(&b, "writable roots: %s\n", strings.Join(pol.WritableRoots, ", "))
	fmt.Fprintf(&b, "network: %s\n", pol.Network)
	fmt.Fprintf(&b, "protected (read-only even in workspace-write): %s\n", strings.Join(pol.Protected, ", "))
	fmt.Fprintf(&b, "read-deny (never readable): %s\n", strings.Join(pol.ReadDeny, ", "))
	return &Result{Text: b.String(), Structured: fields}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
