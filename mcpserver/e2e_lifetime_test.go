//go:build linux

package mcpserver_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestAllowOnceTreeEndsWithItsCall: an approved danger-full-access command
// runs unconfined, but what it starts (`setsid -f`, a double fork) ends
// with its call, as a confined command's does, and the result says so
// plainly rather than failing the call on a descendant that holds its
// output (SPEC §2).
func TestAllowOnceTreeEndsWithItsCall(t *testing.T) {
	w := newWorld(t)
	h := &human{action: "accept", decision: "allow_once"}
	cs := w.stdio(t, clientOpts{elicit: h.handle}, "--mode", "workspace-write")
	token := fmt.Sprintf("cordon-allow-once-%d", time.Now().UnixNano())
	res := call(t, cs, "bash", escalate(fmt.Sprintf(
		"setsid -f bash -c 'sleep 300; true %[1]s'; ( (bash -c 'sleep 301; true %[1]s' &) & ); echo approved-ran", token), "danger-full-access"))
	assert.EqualValues(t, 1, h.asked.Load())
	out := text(res)
	assert.False(t, res.IsError, out)
	assert.NotContains(t, out, "RUNNER_FAILED")
	assert.NotContains(t, out, "WaitDelay")
	assert.Contains(t, out, "approved-ran")
	assert.Contains(t, out, "the processes it left running were ended with it")
	assert.Equal(t, "none", structured(t, res)["backend"])
	if !gone(token) {
		t.Errorf("processes of the approved call outlived it: %v", processesWith(token))
	}
	assert.False(t, strings.Contains(out, "sandbox runner"), out)
}
