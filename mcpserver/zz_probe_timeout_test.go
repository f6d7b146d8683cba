//go:build linux

package mcpserver_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestZZProbeClientTimeout(t *testing.T) {
	step := []agentStep{{"bash", map[string]any{"command": "sleep 75; echo slept-done"}}}
	run := func(t *testing.T, name string, f func(w *world) (string, error, []string)) {
		w := newWorld(t)
		cfg := filepath.Join(w.home, ".config", "cordon")
		os.MkdirAll(cfg, 0o755)
		os.WriteFile(filepath.Join(cfg, "config.toml"), []byte("bash.timeout = \"5m\"\n"), 0o644)
		start := time.Now()
		out, err, rec := f(w)
		t.Logf("%s: %v after %s; received %q; out tail %q", name, err, time.Since(start), rec, tail(out))
	}
	t.Run("codex", func(t *testing.T) {
		codex := codexCLI(t)
		run(t, "codex", func(w *world) (string, error, []string) {
			model := newResponsesStandIn(t, step)
			out, err := runAgent(t, w.ws, codexHome(t, w, model.url, "stdio"), 150*time.Second, codex,
				"exec", "--strict-config", "--skip-git-repo-check", "--ephemeral", "--json", "-C", w.ws, "Use the cordon tools.")
			return out, err, model.received()
		})
	})
	t.Run("opencode", func(t *testing.T) {
		opencode := opencodeCLI(t)
		run(t, "opencode", func(w *world) (string, error, []string) {
			model := newChatStandIn(t, step)
			out, err := runAgent(t, w.outside, opencodeHome(t, w, model.url), 150*time.Second, opencode, "run", "Use the cordon tools.")
			return out, err, model.received()
		})
	})
}

func tail(s string) string {
	if len(s) > 600 {
		return s[len(s)-600:]
	}
	return s
}
