package tools_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/tools"
)

// TestDescribedDefaultsAreTheConstants: a default or limit that a tool's
// description or an argument's description tells the model in words is
// the Go constant the handler applies. The bounds are generated from the
// constants (schemaBounds in schema.go); the prose cannot be, so this test
// keeps it equal.
func TestDescribedDefaultsAreTheConstants(t *testing.T) {
	arg := func(tool, name string) string {
		p := toolNamed(t, tool).InputSchema().Properties[name]
		if p == nil {
			t.Fatalf("%s has no argument %s", tool, name)
		}
		return p.Description
	}
	for _, c := range []struct{ where, text, want string }{
		{"bash.timeout_ms", arg(tools.NameBash, "timeout_ms"), fmt.Sprintf("(default %d)", tools.DefaultBashTimeout.Milliseconds())},
		{"bash.yield_ms", arg(tools.NameBash, "yield_ms"), fmt.Sprintf("Default %d.", tools.DefaultYield.Milliseconds())},
		{"process_input.wait_ms", arg(tools.NameProcessInput, "wait_ms"), fmt.Sprintf("Default %d.", tools.DefaultInputWait.Milliseconds())},
		{"process_input", toolNamed(t, tools.NameProcessInput).Description, fmt.Sprintf("within wait_ms (default %d)", tools.DefaultInputWait.Milliseconds())},
		{"read_file.limit", arg(tools.NameReadFile, "limit"), fmt.Sprintf("Default %d.", tools.DefaultReadLimit)},
		{"grep.max_results", arg(tools.NameGrep, "max_results"), fmt.Sprintf("Default %d.", tools.DefaultGrepResults)},
		{"list_directory", toolNamed(t, tools.NameListDirectory).Description, fmt.Sprintf("(depth 1..%d). At most %d entries.", tools.MaxListDepth, tools.MaxListEntries)},
	} {
		if !strings.Contains(c.text, c.want) {
			t.Errorf("%s says %q, which lacks %q: the description and the constant disagree", c.where, c.text, c.want)
		}
	}
}
