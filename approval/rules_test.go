package approval

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		spec string
		want Rule
	}{
		{"git push", Rule{Command: []string{"git"}, Subcommand: [][]string{{"push"}}, Reason: `matches rule "git push"`}},
		{"  kubectl   delete  ", Rule{Command: []string{"kubectl"}, Subcommand: [][]string{{"delete"}}, Reason: `matches rule "kubectl delete"`}},
		{"rm -r # recursive delete", Rule{Command: []string{"rm"}, Options: []string{"-r"}, Reason: "recursive delete"}},
		{"docker system prune", Rule{Command: []string{"docker"}, Subcommand: [][]string{{"system"}, {"prune"}}, Reason: `matches rule "docker system prune"`}},
		{"git clean -f --force # x", Rule{Command: []string{"git"}, Subcommand: [][]string{{"clean"}}, Options: []string{"-f", "--force"}, Reason: "x"}},
		{"Systemctl Start|stop # y", Rule{Command: []string{"systemctl"}, Subcommand: [][]string{{"start", "stop"}}, Reason: "y"}},
		{"mkfs|mkfs.* # z", Rule{Command: []string{"mkfs", "mkfs.*"}, Reason: "z"}},
		{"kill -- -1 # k", Rule{Command: []string{"kill"}, Args: []string{"-1"}, Reason: "k"}},
		{"git checkout -- . # c", Rule{Command: []string{"git"}, Subcommand: [][]string{{"checkout"}}, Args: []string{"."}, Reason: "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := ParseRule(tt.spec)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseRuleErrors(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"", "empty rule"},
		{"   # only a reason", "empty rule"},
		{"/usr/bin/git push", `write "git"`},
		{"-rf", "must be a command name"},
		{"git||x", "empty command name"},
		{"git push|", "empty subcommand"},
		{"git [push", "not a valid pattern"},
		{"rm -r foo", `subcommand "foo" must come before the options`},
		{"rm -", "has no name"},
		{"rm --", "nothing after"},
		{"rm -r|-R", "separate words"},
		{"git push --force=yes", "without a value"},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			_, err := ParseRule(tt.spec)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseRulesNamesTheEntry(t *testing.T) {
	_, err := ParseRules([]string{"git push", ""})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rule 2:")
}

func TestRuleStringRoundTrips(t *testing.T) {
	for _, r := range DefaultRules() {
		t.Run(r.String(), func(t *testing.T) {
			back, err := ParseRule(r.String())
			require.NoError(t, err)
			assert.Equal(t, r, back)
		})
	}
}

func TestDefaultRulesAreCopies(t *testing.T) {
	rules := DefaultRules()
	rules[0].Command[0] = "changed"
	rules[0].Reason = "changed"
	assert.NotEqual(t, "changed", DefaultRules()[0].Command[0])
	assert.True(t, defaultRules.Classify("rm -rf x").Dangerous())
}

// rules.md is the human-facing list of defaults: every default rule must
// appear in its table, written exactly as ParseRule reads it, with its
// reason.
func TestRulesDocListsDefaults(t *testing.T) {
	doc, err := os.ReadFile("rules.md")
	require.NoError(t, err)
	for _, spec := range defaultRuleSpecs {
		body, reason, _ := strings.Cut(spec, "#")
		// Markdown tables need | escaped.
		row := "| `" + strings.ReplaceAll(strings.TrimSpace(body), "|", `\|`) + "` | " + strings.TrimSpace(reason) + " |"
		assert.Contains(t, string(doc), row, "rules.md is missing the row for %q", spec)
	}
}

func TestRuleMatching(t *testing.T) {
	tests := []struct {
		spec    string
		command string
		want    bool
	}{
		{"rm -r", "rm -vr x", true},
		{"rm -r", "rm -R x", false},
		{"rm -rf", "rm -fvr x", true},
		{"rm -rf", "rm -r -f x", false},
		{"rm --recursive", "rm --recursive=yes x", true},
		{"rm --recursive", "rm --re x", false},
		{"rm --recursive", "rm --recu x", true},
		{"rm --recursive", "rm -- --recursive", false},
		{"git push", "git -c a=b push", true},
		{"git push", "git commit -m push", false},
		{"git push", "git -C dir --no-pager push", true},
		{"git push", "git push", true},
		{"git push", "GIT PUSH", true},
		{"git push", "git", false},
		{"docker system prune", "docker system prune -a", true},
		{"docker system prune", "docker --context x system prune", true},
		{"docker system prune", "docker system df", false},
		{"docker system prune", "docker prune system", false},
		{"npm publish", "npm -- publish", true},
		{"mkfs.*", "mkfs.ext4 /dev/x", true},
		{"mkfs.*", "mkfs /dev/x", false},
		{"kill -- -1", "kill -s KILL -1", true},
		{"kill -- -1", "kill -1234", false},
		{"git checkout -- .", "git checkout main", false},
	}
	for _, tt := range tests {
		t.Run(tt.spec+" / "+tt.command, func(t *testing.T) {
			r, err := ParseRule(tt.spec)
			require.NoError(t, err)
			assert.Equal(t, tt.want, Rules{r}.Classify(tt.command).Dangerous())
		})
	}
}
