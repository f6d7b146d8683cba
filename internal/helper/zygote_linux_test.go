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

// BenchmarkRulesFingerprint is what a warm Landlock call pays before its
// command when the stamps of its rules' directories are not to be trusted
// (fingerprint_linux.go), for the read-deny list of a home made for it.
func BenchmarkRulesFingerprint(b *testing.B) {
	_, cfg := userHome(b)
	paths := pathsOf(cfg)
	for b.Loop() {
		paths.fingerprint()
	}
}

// userHome makes a home like a user's, with the read-deny entries among
// others, and the config of a sandbox that denies them.
func userHome(tb testing.TB) (string, Config) {
	home := tb.TempDir()
	for _, d := range []string{".ssh", ".config/gh", ".cache", ".local/share", "src", "Documents"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	cfg := Config{LandlockABI: 6, Writable: []string{tb.TempDir()}}
	for _, rel := range []string{".ssh", ".aws", ".gnupg", ".kube", ".docker", ".config/gh", ".config/gcloud",
		".netrc", ".npmrc", ".claude.json", ".codex/config.toml", ".config/Code/User/settings.json", ".cursor/mcp.json"} {
		cfg.DenyRead = append(cfg.DenyRead, filepath.Join(home, rel))
	}
	return home, cfg
}

// TestRulesStateSeesEveryChange: whether the stamps are trusted or not,
// an entry made, renamed or removed in a listed directory, and a writable
// root made anew, are seen; an unchanged host holds, and a state passed
// to the zygote as text reads back the same.
func TestRulesStateSeesEveryChange(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		home, cfg := userHome(t)
		paths := pathsOf(cfg)
		take := func() rulesState {
			s := takeRulesState(paths)
			if trusted {
				// As if taken well after the directories last changed:
				// the stamps alone decide.
				s.taken += int64(10 * racyWindow)
			}
			return s
		}
		s := take()
		back, err := parseRulesState(s.String())
		require.NoError(t, err)
		require.Equal(t, s, back)
		require.Equal(t, trusted, s.trusted(paths.stamps()))
		// The home's ancestors are shared (/tmp): another test may change
		// them meanwhile, so an unchanged host gets a few tries.
		held := false
		for try := 0; try < 5 && !held; try++ {
			s := take()
			held = s.holds(paths)
		}
		require.True(t, held, "an unchanged host")

		for name, change := range map[string]func(){
			"made":    func() { require.NoError(t, os.WriteFile(filepath.Join(home, ".ssh-backup"), nil, 0o600)) },
			"renamed": func() { require.NoError(t, os.Rename(filepath.Join(home, "src"), filepath.Join(home, "src2"))) },
			"removed": func() { require.NoError(t, os.Remove(filepath.Join(home, "Documents"))) },
			"root made anew": func() {
				require.NoError(t, os.Rename(cfg.Writable[0], cfg.Writable[0]+".old"))
				require.NoError(t, os.Mkdir(cfg.Writable[0], 0o755))
			},
		} {
			s := take()
			change()
			require.False(t, s.holds(paths), "%s (trusted stamps: %v)", name, trusted)
		}
	}
}

// TestRacilyCleanStampsAreNotTrusted: a ctime as recent as the stamp is
// not proof that nothing changed in the same clock tick.
func TestRacilyCleanStampsAreNotTrusted(t *testing.T) {
	_, cfg := userHome(t)
	paths := pathsOf(cfg)
	s := takeRulesState(paths)
	require.False(t, s.trusted(paths.stamps()), "directories made just now")
	s.taken += int64(10 * racyWindow)
	require.True(t, s.trusted(paths.stamps()))
}

// BenchmarkRulesStateHolds is what the check costs a warm call while
// nothing changed, the stamps trusted: against BenchmarkRulesFingerprint,
// which it replaces.
func BenchmarkRulesStateHolds(b *testing.B) {
	_, cfg := userHome(b)
	paths := pathsOf(cfg)
	s := takeRulesState(paths)
	s.taken += int64(10 * racyWindow)
	for b.Loop() {
		if !s.holds(paths) {
			// Another process changed /tmp, the home's parent: start
			// again from what is there now.
			s = takeRulesState(paths)
			s.taken += int64(10 * racyWindow)
		}
	}
}
