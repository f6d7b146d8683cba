//go:build linux

package mcpserver_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbeScratchUnderStateDir: the start-up probe makes its scratch
// directory under the state dir, never in the cache directory of a HOME
// that --state-dir told cordon to leave alone, and removes it.
func TestProbeScratchUnderStateDir(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command(cordonBin, "status", "--json", "--state-dir", w.state)
	cmd.Env = append(w.env(), "XDG_CACHE_HOME=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.True(t, strings.Contains(string(out), `"active"`), "the probe ran and passed: %s", out)
	assert.NoDirExists(t, filepath.Join(w.base, "cache", "cordon"))
	assert.NoDirExists(t, filepath.Join(w.home, ".cache", "cordon"), "the probe left the HOME alone")
	left, _ := os.ReadDir(filepath.Join(w.state, "probe"))
	assert.Empty(t, left, "the probe removed its scratch directory")
}
