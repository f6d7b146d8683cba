//go:build linux

package mcpserver_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLogVerifyNamesTheBadLine flips one byte of a real session log:
// `cordon log --verify` must exit 1 and name the line.
func TestLogVerifyNamesTheBadLine(t *testing.T) {
	w := newWorld(t)
	cs := w.stdio(t, clientOpts{version: "2025-11-25"})
	call(t, cs, "bash", map[string]any{"command": "echo one"})
	call(t, cs, "write_file", map[string]any{"path": "f.txt", "content": "x"})
	call(t, cs, "bash", map[string]any{"command": "echo two"})
	cs.Close()
	id := listSessions(t, w)[0]
	waitEnded(t, w, id)
	assert.Contains(t, cordonCLI(t, w, "log", "--verify", id), "hash chain intact")
	readable := cordonCLI(t, w, "log", id)
	assert.Contains(t, readable, "session/start")
	assert.Contains(t, readable, "tool/call")

	path := filepath.Join(w.state, "sessions", id+".jsonl")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := bytes.Split(data, []byte("\n"))
	require.Greater(t, len(lines), 4)
	// Flip one byte inside line 2's data.
	i := bytes.Index(lines[1], []byte(`"data":`)) + 10
	lines[1][i] ^= 0x01
	require.NoError(t, os.WriteFile(path, bytes.Join(lines, []byte("\n")), 0o600))

	cmd := exec.Command(cordonBin, "log", "--state-dir", w.state, "--verify", id)
	cmd.Env = w.env()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, string(out))
	assert.Equal(t, 1, ee.ExitCode())
	assert.True(t, strings.Contains(string(out), "line 2"), "names the first bad line: %s", out)
}

// TestHealthCheckSessionsAreNotListed: a client that connects, lists the
// tools and leaves (`claude mcp list` does, for every server, every time)
// leaves no line in `cordon sessions`; `--all` still shows it, and its log
// is kept and verifies.
func TestHealthCheckSessionsAreNotListed(t *testing.T) {
	w := newWorld(t)
	cs := w.stdio(t, clientOpts{version: "2025-11-25"})
	_, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	id := sessionOf(t, w)
	require.NoError(t, cs.Close())
	require.Eventually(t, func() bool {
		return !strings.Contains(cordonCLI(t, w, "sessions"), "live")
	}, 20*time.Second, 100*time.Millisecond, "the session ends when its client leaves")
	assert.NotContains(t, cordonCLI(t, w, "sessions"), id)
	assert.Contains(t, cordonCLI(t, w, "sessions", "--all"), id)
	assert.Contains(t, cordonCLI(t, w, "log", id, "--verify"), "hash chain intact")

	cs = w.stdio(t, clientOpts{version: "2025-11-25"})
	call(t, cs, "bash", map[string]any{"command": "true"})
	require.NoError(t, cs.Close())
	listed := cordonCLI(t, w, "sessions")
	assert.Equal(t, 1, strings.Count(listed, "\n")-1, "the session that made a call is listed:\n%s", listed)
}
