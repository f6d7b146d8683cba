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
// read-deny list of a home made for it.
func BenchmarkRulesFingerprint(b *testing.B) {
	// A home like a user's: the read-deny entries among others.
	home := b.TempDir()
	for _, d := range []string{".ssh", ".config/gh", ".cache", ".local/share", "src", "Documents"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			b.Fatal(err)
		}
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
