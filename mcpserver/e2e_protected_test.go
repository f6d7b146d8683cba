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

// TestBashReportsProtection: what the model is told about protected
// paths, on both backends — a write the guard undid is a denial that names
// what was undone, and a refusal a command got over is explained.
func TestBashReportsProtection(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			git := exec.Command("git", "init", "-q")
			git.Dir = w.ws
			require.NoError(t, git.Run())
			cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "workspace-write", "--backend", backend)

			res := call(t, cs, "bash", map[string]any{"command": "mkdir -p .claude && echo '{}' > .claude/settings.json && echo made"})
			assert.True(t, res.IsError, text(res))
			assert.True(t, strings.HasPrefix(text(res), "[sandbox: file access denied under workspace-write mode]"), text(res))
			assert.Contains(t, text(res), filepath.Join(w.ws, ".claude")+" (created)")
			assert.Contains(t, text(res), "made", "the output is still there")
			assert.Equal(t, true, structured(t, res)["denied"])
			assert.NoDirExists(t, filepath.Join(w.ws, ".claude"), "undone on the host")

			res = call(t, cs, "bash", map[string]any{"command": "git config core.hooksPath .husky 2>&1; echo carried on"})
			if backend == "bwrap" {
				assert.False(t, res.IsError, text(res))
				assert.Contains(t, text(res), "[sandbox: .git/config is protected")
				assert.Contains(t, structured(t, res)["notes"], "[sandbox: .git/config is protected: it names code a human runs later outside the sandbox, so only the human changes it]")
			} else {
				assert.True(t, res.IsError, text(res))
				assert.Contains(t, text(res), filepath.Join(w.ws, ".git", "config")+" (changed)")
			}
			cfg, err := os.ReadFile(filepath.Join(w.ws, ".git", "config"))
			require.NoError(t, err)
			assert.NotContains(t, string(cfg), "hooksPath")
		})
	}
}
