package helper

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSignalsScopedRefusesAnUnscopedProcess: the check that a Landlock
// zygote's kill(-1) stays inside its domain is not vacuous: a process
// outside any domain, which can signal its parent, fails it.
func TestSignalsScopedRefusesAnUnscopedProcess(t *testing.T) {
	err := signalsScoped()
	require.Error(t, err)
	require.Contains(t, err.Error(), "signal scoping")
}

// BenchmarkRulesFingerprint is what a warm Landlock call pays before each
// command to know its rules still hold (fingerprint_linux.go), for the
// read-deny list of this machine's home.
func BenchmarkRulesFingerprint(b *testing.B) {
	home, err := os.UserHomeDir()
	if err != nil {
		b.Skip("no home directory:", err)
	}
	cfg := Config{LandlockABI: 6, Writable: []string{b.TempDir()}}
	for _, rel := range []string{".ssh", ".aws", ".gnupg", ".kube", ".docker", ".config/gh", ".config/gcloud",
		".netrc", ".npmrc", ".claude.json", ".codex/config.toml", ".config/Code/User/settings.json", ".cursor/mcp.json"} {
		cfg.DenyRead = append(cfg.DenyRead, filepath.Join(home, rel))
	}
	for b.Loop() {
		rulesFingerprint(cfg)
	}
}
