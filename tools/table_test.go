package tools_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func toolNamed(t testing.TB, name string) tools.Tool {
	t.Helper()
	for _, tool := range tools.Tools() {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %s in the table", name)
	return tools.Tool{}
}

// TestToolTable pins what the table declares: the tools in order, the
// arguments each requires (the fields without omitempty), which never
// write, and which have structuredContent.
func TestToolTable(t *testing.T) {
	want := []struct {
		name     string
		required []string
		readOnly bool
		output   bool
		// escalates: the tool can ask for wider access. Those that write
		// files or start commands can; a background process keeps the
		// mode it started with, so its own tools cannot.
		escalates bool
	}{
		{"bash", []string{"command"}, false, true, true},
		{"process_output", []string{"process_id"}, true, true, false},
		{"process_input", []string{"process_id", "input"}, false, true, false},
		{"process_kill", []string{"process_id"}, false, true, false},
		{"process_list", nil, true, true, false},
		{"read_file", []string{"path"}, true, false, false},
		{"write_file", []string{"path", "content"}, false, true, true},
		{"edit_file", []string{"path", "old_string", "new_string"}, false, true, true},
		{"list_directory", nil, true, true, false},
		{"glob", []string{"pattern"}, true, true, false},
		{"grep", []string{"pattern"}, true, true, false},
		{"sandbox_status", nil, true, true, false},
	}
	all := tools.Tools()
	require.Len(t, all, len(want))
	for i, w := range want {
		tool := all[i]
		t.Run(w.name, func(t *testing.T) {
			assert.Equal(t, w.name, tool.Name)
			assert.NotEmpty(t, tool.Title)
			assert.NotEmpty(t, tool.Description)
			assert.Equal(t, w.required, tool.InputSchema().Required)
			assert.Equal(t, w.readOnly, tool.ReadOnly)
			assert.False(t, tool.ReadOnly && tool.Destructive, "a tool that never writes destroys nothing")
			assert.Equal(t, w.output, tool.OutputSchema() != nil)

			in, err := json.Marshal(tool.InputSchema())
			require.NoError(t, err)
			var schema map[string]any
			require.NoError(t, json.Unmarshal(in, &schema))
			assert.Equal(t, "object", schema["type"])
			assert.Equal(t, false, schema["additionalProperties"], "unknown arguments are refused, and the schema says so")
			assert.NotNil(t, schema["properties"], "an object without arguments still lists its (no) properties")
			for name, p := range tool.InputSchema().Properties {
				assert.NotEmpty(t, p.Description, "%s.%s: the model reads the description", w.name, name)
				assert.NotEmpty(t, p.Type, "%s.%s", w.name, name)
			}
			_, hasEscalation := tool.InputSchema().Properties["sandbox_permissions"]
			assert.Equal(t, w.escalates, hasEscalation, "the tools that write files or start commands, and only they, can ask for wider access")
			if w.escalates {
				assert.False(t, w.readOnly)
			}
		})
	}
}

// TestSchemaBoundsAreTheLimits: the bounds a client is told are the ones
// the tools enforce.
func TestSchemaBoundsAreTheLimits(t *testing.T) {
	bound := func(tool, arg string) (float64, float64) {
		p := toolNamed(t, tool).InputSchema().Properties[arg]
		require.NotNil(t, p, "%s.%s", tool, arg)
		require.NotNil(t, p.Minimum, "%s.%s", tool, arg)
		require.NotNil(t, p.Maximum, "%s.%s", tool, arg)
		return *p.Minimum, *p.Maximum
	}
	lo, hi := bound("bash", "timeout_ms")
	assert.Equal(t, []float64{1, float64(tools.MaxBashTimeout.Milliseconds())}, []float64{lo, hi})
	lo, hi = bound("list_directory", "depth")
	assert.Equal(t, []float64{1, tools.MaxListDepth}, []float64{lo, hi})
	lo, hi = bound("grep", "max_results")
	assert.Equal(t, []float64{1, tools.MaxGrepResults}, []float64{lo, hi})
	lo, hi = bound("grep", "context")
	assert.Equal(t, []float64{0, tools.MaxGrepContext}, []float64{lo, hi})
	lo, _ = bound("edit_file", "expected_replacements")
	assert.Equal(t, float64(1), lo)
	for _, name := range []string{"bash", "write_file", "edit_file"} {
		assert.Equal(t, []any{string(sandbox.WorkspaceWrite), string(sandbox.DangerFullAccess)},
			toolNamed(t, name).InputSchema().Properties["sandbox_permissions"].Enum, name)
	}
	entry := toolNamed(t, "list_directory").OutputSchema().Properties["entries"].Items
	assert.Equal(t, []any{"file", "dir", "symlink", "other"}, entry.Properties["type"].Enum)
}

// TestArgumentsAreDecodedStrictly: every tool refuses unknown arguments,
// wrong types and missing required ones before it does anything, with
// the argument named.
func TestArgumentsAreDecodedStrictly(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"bash", map[string]any{"command": 42}, `bash: argument "command" must be a string, not number`},
		{"bash", map[string]any{}, `bash: missing required argument "command"`},
		{"bash", map[string]any{"command": "true", "sudo": true}, `bash: unknown argument "sudo"`},
		{"bash", map[string]any{"command": "true", "sandbox_permissions": 1}, `bash: argument "sandbox_permissions" must be a string, not number`},
		{"bash", map[string]any{"command": "true", "timeout_ms": "soon"}, `bash: argument "timeout_ms" must be an integer, not string`},
		{"read_file", map[string]any{"path": "a", "limit": 1.5}, `read_file: argument "limit" must be an integer, not number 1.5`},
		{"write_file", map[string]any{"path": "a"}, `write_file: missing required argument "content"`},
		{"edit_file", map[string]any{"path": "a", "old_string": "x"}, `edit_file: missing required argument "new_string"`},
		{"list_directory", map[string]any{"depth": true}, `list_directory: argument "depth" must be an integer, not bool`},
		{"glob", map[string]any{"pattern": "*", "sandbox_permissions": "workspace-write"}, `glob: unknown argument "sandbox_permissions"`},
		{"grep", map[string]any{"pattern": "x", "ignore_case": "yes"}, `grep: argument "ignore_case" must be a boolean, not string`},
		{"sandbox_status", map[string]any{"verbose": true}, `sandbox_status: unknown argument "verbose"`},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			before := snapshotTree(t, w.base)
			res, terr := toolNamed(t, c.tool).Run(bg, w.tb, w.call, c.args)
			assert.Nil(t, res)
			requireFileCode(t, terr, tools.CodeInvalidArgument)
			assert.Equal(t, c.want, terr.Message)
			assert.Equal(t, before, snapshotTree(t, w.base))
		})
	}
}

// TestResultsMatchTheirSchema: what a tool puts in structuredContent is
// what its output schema declares, on success and on a refusal; read_file
// has neither.
func TestResultsMatchTheirSchema(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	w.file(t, "src/a.go", "package a\n")
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"bash", map[string]any{"command": "echo hi; exit 3"}},
		{"bash", map[string]any{"command": "echo x > " + filepath.Join(w.outside, "new.txt")}},
		{"write_file", map[string]any{"path": "src/b.txt", "content": "b\n"}},
		{"write_file", map[string]any{"path": filepath.Join(w.outside, "new.txt"), "content": "x"}},
		{"edit_file", map[string]any{"path": "src/b.txt", "old_string": "b", "new_string": "c"}},
		{"list_directory", map[string]any{"depth": 2}},
		{"list_directory", map[string]any{"path": filepath.Dir(w.canary)}},
		{"glob", map[string]any{"pattern": "**/*.go"}},
		{"grep", map[string]any{"pattern": "package"}},
		{"grep", map[string]any{"pattern": "nothing matches this"}},
		{"sandbox_status", nil},
	}
	for _, c := range calls {
		t.Run(c.tool, func(t *testing.T) {
			tool := toolNamed(t, c.tool)
			res, terr := tool.Run(bg, w.tb, w.call, c.args)
			if terr != nil {
				res = terr.AsResult()
			}
			require.NotNil(t, res.Structured)
			for k := range res.Structured {
				assert.Contains(t, tool.OutputSchema().Properties, k, "%s's result has %s, which its output schema does not declare", c.tool, k)
			}
			resolved, err := tool.OutputSchema().Resolve(nil)
			require.NoError(t, err)
			assert.NoError(t, resolved.Validate(asJSON(t, res.Structured)), res.Text)
		})
	}
	t.Run("read_file", func(t *testing.T) {
		res, terr := toolNamed(t, "read_file").Run(bg, w.tb, w.call, map[string]any{"path": "src/a.go"})
		require.Nil(t, terr)
		assert.Nil(t, res.Structured)
		assert.Nil(t, toolNamed(t, "read_file").OutputSchema())
	})
}

// asJSON is v as a client receives it.
func asJSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}
