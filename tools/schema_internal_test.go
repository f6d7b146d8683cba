package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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

// TestSchemaNamesAreUsed: every constant schemaBounds or schemaEnums
// offers is named by some schema tag, so neither table keeps a value that
// no schema shows.
func TestSchemaNamesAreUsed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "schema.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	tags := regexp.MustCompile(`schema:"([^"]*)"`).FindAllStringSubmatch(src.String(), -1)
	used := map[string]bool{}
	for _, m := range tags {
		for kv := range strings.SplitSeq(m[1], ",") {
			_, v, _ := strings.Cut(kv, "=")
			used[v] = true
		}
	}
	for name := range schemaBounds {
		if !used[name] {
			t.Errorf("schemaBounds[%q] is named by no schema tag", name)
		}
	}
	for name := range schemaEnums {
		if !used[name] {
			t.Errorf("schemaEnums[%q] is named by no schema tag", name)
		}
	}
}
