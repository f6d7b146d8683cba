package tools

import (
	"fmt"
	"strings"
	"testing"
)

// TestKillEscalationIsDescribed: process_kill tells the model how long a
// TERM has before KILL follows; that is killEscalation, which the tests
// outside the package cannot see.
func TestKillEscalationIsDescribed(t *testing.T) {
	secs := int(killEscalation.Seconds())
	for _, tool := range table {
		if tool.Name != NameProcessKill {
			continue
		}
		for _, c := range []struct{ text, want string }{
			{tool.Description, fmt.Sprintf("KILL follows %d s later", secs)},
			{tool.InputSchema().Properties["signal"].Description, fmt.Sprintf("KILL follows %d seconds later", secs)},
		} {
			if !strings.Contains(c.text, c.want) {
				t.Errorf("%q lacks %q: the description and killEscalation disagree", c.text, c.want)
			}
		}
		return
	}
	t.Fatal("no process_kill in the table")
}
