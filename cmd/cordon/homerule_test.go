//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExecRefusesWorkspaceAtHome: `cordon exec` in workspace-write with
// the home as workspace exits 125 with a message naming the root and the
// fix, on both backends, and the command writes nothing; a project inside
// the home runs.
func TestExecRefusesWorkspaceAtHome(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			e := newCfgEnv(t)
			planted := filepath.Join(e.home, ".bashrc")
			r := e.run(t, nil, "exec", "--backend", backend, "--mode", "workspace-write", "--workspace", e.home,
				"--", "sh", "-c", `echo pwned >> "$HOME/.bashrc"`)
			assert.Equal(t, 125, r.code, r.stderr)
			assert.Contains(t, r.stderr, "cordon: sandbox unavailable: the writable root "+e.home+" (the workspace)")
			assert.Contains(t, r.stderr, "project directory")
			assert.NoFileExists(t, planted)

			// wrap --writable follows the same rule.
			r = e.run(t, nil, "wrap", "--backend", backend, "--workspace", e.ws, "--writable", e.home,
				"--", "sh", "-c", `echo pwned >> "$HOME/.bashrc"`)
			assert.Equal(t, 125, r.code, r.stderr)
			assert.Contains(t, r.stderr, "the writable root "+e.home+" (extra_write_allow or wrap --writable)")
			assert.NoFileExists(t, planted)

			proj := filepath.Join(e.home, "proj")
			require.NoError(t, os.MkdirAll(proj, 0o755))
			r = e.run(t, nil, "exec", "--backend", backend, "--mode", "workspace-write", "--workspace", proj,
				"--", "sh", "-c", `echo ok > made.txt`)
			assert.Equal(t, 0, r.code, r.stderr)
			assert.FileExists(t, filepath.Join(proj, "made.txt"))
		})
	}
}

// TestStatusShowsHomeRefusalPathWarningsAndCredentials: `cordon status`
// says a workspace at the home is refused (exit 1), names each relative
// PATH entry, and lists the read-deny entries with their tools.
func TestStatusShowsHomeRefusalPathWarningsAndCredentials(t *testing.T) {
	e := newCfgEnv(t)
	path := "PATH=./node_modules/.bin:" + os.Getenv("PATH")
	r := e.run(t, []string{path}, "status", "--json", "--mode", "workspace-write", "--workspace", e.home)
	assert.Equal(t, 1, r.code, r.stderr)
	var st struct {
		Refused      string   `json:"refused"`
		PathWarnings []string `json:"path_warnings"`
		ReadDeny     []struct {
			Path, Tool string
		} `json:"read_deny_entries"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	assert.Contains(t, st.Refused, "the writable root "+e.home+" (the workspace)")
	require.Len(t, st.PathWarnings, 1)
	assert.Contains(t, st.PathWarnings[0], `"./node_modules/.bin"`)
	var paths []string
	for _, d := range st.ReadDeny {
		paths = append(paths, d.Path+" "+d.Tool)
	}
	for _, want := range []string{"~/.claude/.credentials.json Claude Code", "~/.codex/auth.json Codex", "~/.gemini/oauth_creds.json Gemini CLI"} {
		assert.Contains(t, paths, want)
	}

	r = e.run(t, []string{path}, "status", "--mode", "workspace-write")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `warning:      PATH holds the relative entry "./node_modules/.bin"`)
	assert.Contains(t, r.stdout, "~/.qwen/oauth_creds.json (Qwen Code)")
	assert.False(t, strings.Contains(r.stdout, "REFUSED"), r.stdout)
}
