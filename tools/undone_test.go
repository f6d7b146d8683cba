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
