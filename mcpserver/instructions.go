package mcpserver

import (
	"fmt"
	"strings"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
)

// instructionsLead is how much of the instructions a client may show by
// itself: Codex lists a deferred server by the first line of its
// instructions, cut at about 200 characters (SPEC §5).
const instructionsLead = 200

// instructions tell the model its mode, where it may write and how to ask
// for more. The first line stands alone within instructionsLead
// characters: what cordon is, the mode, and that wider access is asked for
// with sandbox_permissions plus a justification. The lines after it are
// the details.
func instructions(set sandbox.Settings) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cordon: sandboxed shell and file tools. Mode: %s. "+
		"For wider access, retry a refused call with sandbox_permissions (the wider mode) and a one-sentence justification; a human decides.\n", set.Mode)
	switch set.Mode {
	case sandbox.ReadOnly:
		b.WriteString("You may read files but not change any (only /tmp is writable). ")
	case sandbox.WorkspaceWrite:
		fmt.Fprintf(&b, "You may write inside the workspace %s (and /tmp); .git/hooks, .git/config, .cordon/ and shell start-up files stay read-only. ", set.Workspace)
	case sandbox.DangerFullAccess:
		b.WriteString("Commands run unconfined. ")
	}
	b.WriteString("Credential locations (~/.ssh, ~/.aws, …) are never readable. ")
	b.WriteString("A call the sandbox stops returns a result starting with [sandbox: file access denied …]. " +
		"If the write is really needed, retry the same bash, write_file or edit_file call with sandbox_permissions set to the wider mode " +
		"(workspace-write or danger-full-access) and a one-sentence justification; the human approves or refuses. " +
		"read_file returns the file's lines verbatim after a header line. " +
		"For a dev server, a watcher, a long test run or a REPL, run bash with background: true (tty: true for a terminal): " +
		"process_output waits for its output (pass wait_ms instead of calling again and again), process_input writes to it, process_kill ends it and everything it started; " +
		"background processes end with the session. Call sandbox_status to see the current policy.")
	return b.String()
}

// instructionsHeading introduces the instructions in a result, for a
// client that does not show them.
const instructionsHeading = "[cordon's instructions, which your client does not show you]\n"

// giveInstructions puts the instructions, with the session's mode, at the
// head of r when the client does not show its model the instructions of
// initialize (Gemini CLI, Qwen Code): once per session, in the first
// result they fit in whole, so that they never push a result over the
// client's budget.
func (s *Server) giveInstructions(call tools.Call, r *tools.Result) {
	if r == nil || call.Session == nil || call.Session.Client().Instructions {
		return
	}
	set := s.tb.Config().Settings
	set.Mode = call.Session.ModeOr(set.Mode)
	note := instructionsHeading + instructions(set) + "\n\n"
	if len([]rune(note)) > s.tb.Room(call, r) || !call.Session.TakeInstructions() {
		return
	}
	r.Text = note + r.Text
}
