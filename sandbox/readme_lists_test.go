package sandbox

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README carries the protected names and the read-deny list for
// users, as tables generated from the data (`make readme`). Adding an
// entry is one line of data and nothing else: the README is checked never
// to claim an entry the data lacks or to give it another tool, not to be
// complete; what it lacks is named in the test's log until the next
// `make readme`.

// readmeTable is one generated table of the README, between two markers.
type readmeTable struct {
	begin, end string
	header     string
	// entries are the data's (cell, tool) pairs in the data's order.
	entries func() [][2]string
	// render writes the rows of entries.
	render func(entries [][2]string) string
	// parse reads back the (cell, tool) pairs of one row.
	parse func(row string) ([][2]string, bool)
}

var backticked = regexp.MustCompile("`([^`]+)`")

var readmeTables = []readmeTable{
	{
		begin:  "<!-- protected-names: generated from sandbox/protected_names.txt by `make readme` -->",
		end:    "<!-- /protected-names -->",
		header: "| tool | protected names |\n| --- | --- |\n",
		entries: func() [][2]string {
			var out [][2]string
			for _, e := range ProtectedNameList {
				out = append(out, [2]string{e.Name, e.Tool})
			}
			return out
		},
		// One row a tool, in the order the tools first appear.
		render: func(entries [][2]string) string {
			var tools []string
			names := map[string][]string{}
			for _, e := range entries {
				if !slices.Contains(tools, e[1]) {
					tools = append(tools, e[1])
				}
				names[e[1]] = append(names[e[1]], "`"+e[0]+"`")
			}
			var b strings.Builder
			for _, tool := range tools {
				b.WriteString("| " + tool + " | " + strings.Join(names[tool], ", ") + " |\n")
			}
			return b.String()
		},
		parse: func(row string) ([][2]string, bool) {
			cells := strings.Split(strings.Trim(row, "| "), " | ")
			if len(cells) != 2 {
				return nil, false
			}
			var out [][2]string
			for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
				out = append(out, [2]string{m[1], cells[0]})
			}
			return out, len(out) > 0
		},
	},
	{
		begin:  "<!-- read-deny: generated from sandbox/readdeny.go by `make readme` -->",
		end:    "<!-- /read-deny -->",
		header: "| read-deny entry | whose |\n| --- | --- |\n",
		entries: func() [][2]string {
			var out [][2]string
			for _, e := range ReadDenyEntries {
				out = append(out, [2]string{e.Path, e.Tool})
			}
			return out
		},
		render: func(entries [][2]string) string {
			var b strings.Builder
			for _, e := range entries {
				b.WriteString("| `~/" + e[0] + "` | " + e[1] + " |\n")
			}
			return b.String()
		},
		parse: func(row string) ([][2]string, bool) {
			cells := strings.Split(strings.Trim(row, "| "), " | ")
			if len(cells) != 2 {
				return nil, false
			}
			m := backticked.FindStringSubmatch(cells[0])
			if m == nil || !strings.HasPrefix(m[1], "~/") {
				return nil, false
			}
			return [][2]string{{strings.TrimPrefix(m[1], "~/"), cells[1]}}, true
		},
	},
}

// TestReadmeListsMatchTheData: each of the README's tables names only
// entries of the data, each with its tool, in any order; with
// CORDON_UPDATE_README=1 (`make readme`) the tables are rewritten from
// the data.
func TestReadmeListsMatchTheData(t *testing.T) {
	readme := filepath.Join("..", "README.md")
	data, err := os.ReadFile(readme)
	require.NoError(t, err)
	s := string(data)
	for _, tbl := range readmeTables {
		i, j := strings.Index(s, tbl.begin), strings.Index(s, tbl.end)
		require.True(t, i >= 0 && j > i, "README.md lacks the markers %q and %q", tbl.begin, tbl.end)
		if os.Getenv("CORDON_UPDATE_README") == "1" {
			s = s[:i] + tbl.begin + "\n" + tbl.header + tbl.render(tbl.entries()) + s[j:]
			continue
		}
		body, ok := strings.CutPrefix(s[i+len(tbl.begin):j], "\n"+tbl.header)
		require.True(t, ok, "the table after %q does not start with its header", tbl.begin)
		data := tbl.entries()
		var shown [][2]string
		for _, row := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
			pairs, ok := tbl.parse(row)
			if !assert.True(t, ok, "README.md: not a row of the table: %q", row) {
				continue
			}
			for _, pair := range pairs {
				assert.Contains(t, data, pair, "README.md names %q (%s), which the data does not: run make readme", pair[0], pair[1])
				assert.NotContains(t, shown, pair, "README.md names %q twice", pair[0])
				shown = append(shown, pair)
			}
		}
		for _, e := range data {
			if !slices.Contains(shown, e) {
				t.Logf("README.md does not show %q (%s) yet: make readme adds it", e[0], e[1])
			}
		}
	}
	if os.Getenv("CORDON_UPDATE_README") == "1" {
		require.NoError(t, os.WriteFile(readme, []byte(s), 0o644))
	}
}

// TestReadmeTablesCatchAStaleRow: the check can fail: a row whose entry
// the data lacks, or shows under another tool, is caught.
func TestReadmeTablesCatchAStaleRow(t *testing.T) {
	for _, tbl := range readmeTables {
		data := tbl.entries()
		for _, stale := range [][2]string{{".no-such-entry", data[0][1]}, {data[0][0], "Another Tool"}} {
			pairs, ok := tbl.parse(strings.TrimSuffix(tbl.render([][2]string{stale}), "\n"))
			require.True(t, ok)
			assert.NotContains(t, data, pairs[0], "%s", tbl.begin)
		}
		// What it renders, it reads back.
		var back [][2]string
		for _, row := range strings.Split(strings.TrimSuffix(tbl.render(data), "\n"), "\n") {
			pairs, ok := tbl.parse(row)
			require.True(t, ok, row)
			back = append(back, pairs...)
		}
		assert.ElementsMatch(t, data, back)
	}
}
