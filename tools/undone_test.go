package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cordonhq/cordon/sandbox"
)

// TestUndoneMessageSaysWhatWasDone: a disarmed repository or rebase is set
// aside, not restored, and the model is told which.
func TestUndoneMessageSaysWhatWasDone(t *testing.T) {
	restored := undoneMessage(sandbox.Outcome{ExitCode: 0, Undone: []sandbox.Change{{Path: "/ws/.bashrc", What: "changed"}}}, "out")
	assert.Contains(t, restored, "which cordon restored after it")
	assert.Contains(t, restored, "/ws/.bashrc (changed)")

	disarmed := undoneMessage(sandbox.Outcome{ExitCode: 1, Undone: []sandbox.Change{
		{Path: "/ws/.bashrc", What: "changed"},
		{Path: "/ws/.git/rebase-merge", What: "disarmed", Detail: "an unfinished rebase"},
	}}, "out")
	assert.Contains(t, disarmed, "exited 1")
	assert.Contains(t, disarmed, "which cordon undid (restored, or disarmed and set aside) after it")
	assert.NotContains(t, disarmed, "cordon restored")
	assert.Contains(t, disarmed, "its output:\nout")
}

// TestUndoneMessageSaysWhereTheHostsVersionIs: a protected path the host
// changed while the sandbox lived is restored, and the message says where
// the human's version was kept, without blaming the command for it.
func TestUndoneMessageSaysWhereTheHostsVersionIs(t *testing.T) {
	kept := "/ws/.git/config.cordon-host-20261207T130000Z"
	msg := undoneMessage(sandbox.Outcome{ExitCode: 137, Undone: []sandbox.Change{{Path: "/ws/.git/config", What: "changed", HostKept: kept}}}, "")
	assert.Contains(t, msg, "the host changed /ws/.git/config while a sandbox lived; cordon restored the version from before and kept yours as "+kept+": compare and keep the one you meant")
	assert.NotContains(t, msg, "it had written to protected paths")
	assert.Equal(t, []string{"/ws/.git/config -> " + kept}, hostKept([]sandbox.Change{{Path: "/ws/.git/config", What: "changed", HostKept: kept}, {Path: "/ws/.envrc", What: "created"}}))
}
