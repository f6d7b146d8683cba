package tools

import (
	"fmt"
	"strings"

	"github.com/cordonhq/cordon/fsfence"
	"github.com/cordonhq/cordon/internal/pathx"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
)

// RootsEffect is what the client's roots do to a session's writable roots.
type RootsEffect struct {
	Roots         []string `json:"roots"`
	WritableRoots []string `json:"writable_roots"`
	// SetAside: the roots held none of the writable roots (the agent runs
	// in another directory than the workspace) and narrowed nothing.
	SetAside bool `json:"set_aside"`
	// Narrowed: the roots took writable places away.
	Narrowed bool   `json:"narrowed"`
	Note     string `json:"note,omitempty"`
}

// NoteClientRoots works out what the client's roots just fetched do under
// the session's mode now, records it in the session log (a roots event)
// and returns it for the server's log, so a human can see why a session
// writes where it does.
func (tb *Toolbox) NoteClientRoots(call Call) (RootsEffect, error) {
	call = tb.pin(call)
	roots, _ := call.Session.ClientRoots()
	pol, terr := tb.resolveToRead(call)
	if terr != nil {
		return RootsEffect{}, terr
	}
	eff := rootsEffect(pol, roots)
	if call.Session.Log != nil && len(roots) > 0 {
		if _, err := call.Session.Log.Append(sessionlog.EventRoots, eff); err != nil {
			return eff, err
		}
	}
	return eff, nil
}

func rootsEffect(pol sandbox.ExecutionPolicy, roots []string) RootsEffect {
	eff := RootsEffect{Roots: roots, WritableRoots: pol.WritableRoots, SetAside: pol.ClientRootsSetAside, Narrowed: pol.RootsBeforeClient != nil}
	eff.Note = rootsNote(pol, roots)
	return eff
}

// rootsNote is one sentence on the client's roots for sandbox_status and
// the logs, or "" when the client declared none.
func rootsNote(pol sandbox.ExecutionPolicy, roots []string) string {
	switch {
	case len(roots) == 0:
		return ""
	case pol.ClientRootsSetAside:
		return fmt.Sprintf("the client's roots (%s) were set aside: they hold none of the writable roots (the client runs in another directory than the workspace), so they narrow nothing", strings.Join(roots, ", "))
	case pol.RootsBeforeClient != nil:
		return fmt.Sprintf("the client's roots (%s) narrow the writable roots to %s", strings.Join(roots, ", "), strings.Join(pol.WritableRoots, ", "))
	}
	return fmt.Sprintf("the client's roots (%s) hold all the writable roots and narrow nothing", strings.Join(roots, ", "))
}

// narrowedLine explains a refusal the client's roots caused: no sandbox
// mode widens them, so no escalation is suggested for it.
func narrowedLine(pol sandbox.ExecutionPolicy) string {
	return fmt.Sprintf("[sandbox: narrowed by the client's roots to %s; no sandbox mode widens the client's roots: the human can start the client in the directory to write]",
		strings.Join(pol.WritableRoots, ", "))
}

// narrowedByClient reports whether the fence refused a write only because
// the client's roots narrowed the writable roots.
func narrowedByClient(pol sandbox.ExecutionPolicy, de *fsfence.DeniedError) bool {
	if pol.RootsBeforeClient == nil || de.Reason != fsfence.ReasonOutsideRoots {
		return false
	}
	for _, r := range pol.RootsBeforeClient {
		if pathx.Within(de.Path, r) {
			return true
		}
	}
	return false
}
