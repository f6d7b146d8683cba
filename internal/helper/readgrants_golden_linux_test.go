package helper

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Landlock read rules around a read-deny list, as a golden file
// (testdata/readrules.golden), so that a review sees in a diff what a
// change grants. Only the rules' paths inside the test tree are written
// (shown under /home/dev): the walk also grants the entries of / and of
// each directory above the tree, which differ from machine to machine.
// Rewrite it with
//
//	go test ./internal/helper -run TestReadRulesGolden -update
func TestReadRulesGolden(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".ssh", ".config/gh", ".config/git", "project/src", "project/secrets"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".ssh/id_ed25519", ".config/gh/hosts.yml", ".config/git/config", ".gitconfig", "project/go.mod", "project/secrets/token"} {
		if err := os.WriteFile(filepath.Join(base, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(".ssh", filepath.Join(base, "ssh-link")); err != nil {
		t.Fatal(err)
	}
	const home = "/home/dev"
	deny := []string{".ssh", ".config/gh", ".aws", "project/secrets/token"}
	var b strings.Builder
	b.WriteString("# ReadRules(" + strings.Join(deny, ", ") + "), paths in the tree only\n")
	for i, d := range deny {
		deny[i] = filepath.Join(base, d)
	}
	b.WriteString("# no read-deny list:\n")
	for _, r := range ReadRules(nil) {
		b.WriteString(ruleInTree(fmt.Sprint(r), base, home) + "\n")
	}
	b.WriteString("# with it:\n")
	for _, r := range ReadRules(deny) {
		b.WriteString(ruleInTree(fmt.Sprint(r), base, home) + "\n")
	}
	got := b.String()
	golden := filepath.Join("testdata", "readrules.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/helper -run TestReadRulesGolden -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("the read rules changed: review them, then rerun with -update\n--- want\n%s--- got\n%s", want, got)
	}
}

// ruleInTree rewrites a go-landlock rule's String ("REQUIRE {rights}
// for paths [a b]") with only "/" and the paths inside base, base shown
// as home.
func ruleInTree(rule, base, home string) string {
	rule = strings.ReplaceAll(rule, base, home)
	head, paths, ok := strings.Cut(rule, "[")
	if !ok {
		return rule
	}
	var kept []string
	for _, p := range strings.Fields(strings.TrimSuffix(paths, "]")) {
		if p == "/" || p == home || strings.HasPrefix(p, home+"/") {
			kept = append(kept, p)
		}
	}
	return head + "[" + strings.Join(kept, " ") + "]"
}
