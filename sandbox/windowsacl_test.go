package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/internal/winacl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The windows-acl backend is internal/winacl, tested there; these are its
// glue's tests: from a resolved policy to a ConfinedArgv.

// winRestricted is detection's outcome where a restricted token can be
// made; winFallback where it cannot.
var winRestricted = winacl.Decision{Token: winacl.TokenRestricted}

func winFallback(reason string) winacl.Decision {
	return winacl.Decision{Token: winacl.TokenCurrent, Reason: reason}
}

// winTestPolicy resolves a policy for a fresh workspace, with a session
// tmp and whatever the setup function puts in the workspace first.
func winTestPolicy(t *testing.T, mode Mode, setup func(ws string)) ExecutionPolicy {
	t.Helper()
	ws, tmp := t.TempDir(), t.TempDir()
	if setup != nil {
		setup(ws)
	}
	svc := PolicyService{Settings: Settings{Mode: mode, Workspace: ws, Network: NetworkAllow}}
	p, err := svc.Resolve(Request{TmpDir: tmp})
	require.NoError(t, err)
	return p
}

func winMkdir(t *testing.T, parts ...string) string {
	t.Helper()
	p := filepath.Join(parts...)
	require.NoError(t, os.MkdirAll(p, 0o755))
	return p
}

func TestWindowsACLPolicy(t *testing.T) {
	p := winTestPolicy(t, WorkspaceWrite, func(ws string) { winMkdir(t, ws, ".git", "hooks") })
	p.ReadDeny = []string{"/home/me/.ssh"}
	assert.Equal(t, winacl.Policy{WritableRoots: p.WritableRoots, Protected: p.Protected, ReadDeny: p.ReadDeny, TmpDir: p.TmpDir},
		windowsACLPolicy(p))
	p.Network = NetworkDeny
	assert.True(t, windowsACLPolicy(p).NetworkDeny)
}

func TestWindowsACLLimitsArePartial(t *testing.T) {
	enf, _ := windowsACLLimits(winRestricted)
	assert.Equal(t, EnforcementPartial, enf, "reads and the network are never restricted")
	enf, _ = windowsACLLimits(winFallback("CreateRestrictedToken: Access is denied."))
	assert.Equal(t, EnforcementPartial, enf)
}

func TestWindowsACLConfine(t *testing.T) {
	p := winTestPolicy(t, WorkspaceWrite, func(ws string) { winMkdir(t, ws, ".git", "hooks") })
	p.Network = NetworkDeny
	p.ReadDeny = []string{"/home/me/.ssh"}
	cp, err := p.ToConfined()
	require.NoError(t, err)
	argv := []string{"bash", "-c", "echo hi > out.txt"}

	c, conf, err := windowsACLConfine(`C:\cordon\cordon.exe`, argv, cp, winRestricted)
	require.NoError(t, err)
	assert.Equal(t, windowsACLName, c.Backend)
	// internal/winacl's TestConfine checks the runner's part.
	assert.Equal(t, append([]string{`C:\cordon\cordon.exe`, HelperArg}, conf.Args...), c.Argv, "[runner] [profile args...] [--] [original argv...]")
	assert.Equal(t, []string{"--windows-acl", "--token", "restricted"}, c.Argv[2:5])
	assert.Equal(t, argv, c.Argv[len(c.Argv)-len(argv):])
	assert.Empty(t, c.ExtraFiles, "exec.Cmd cannot pass extra descriptors on Windows")
	assert.Zero(t, c.statusFD)
	assert.Equal(t, EnforcementPartial, c.Enforcement)
	assert.Contains(t, c.Env, "TEMP="+p.TmpDir)
	assert.Contains(t, c.Env, "TMP="+p.TmpDir)
	assert.Contains(t, c.Env, "TMPDIR="+p.TmpDir)
	merged := mergeEnv([]string{"HOME=/h", "TEMP=/old"}, c.Env)
	assert.Contains(t, merged, "TEMP="+p.TmpDir)
	assert.NotContains(t, merged, "TEMP=/old")
	assert.Equal(t, winacl.DenialSignatures, c.DenialSignatures)
	assert.Equal(t, windowsACLRunnerRules, c.RunnerFailureRules)
	un := strings.Join(c.Unenforced, "\n")
	assert.Contains(t, un, "network deny")
	assert.Contains(t, un, "read-deny list")
	assert.Contains(t, un, filepath.Join(p.WorkspaceRoot, ".bashrc"), "missing protected paths are named")
	assert.NotContains(t, un, filepath.Join(p.WorkspaceRoot, ".git", "hooks"), "an existing one is enforced")

	t.Run("network allowed is not listed", func(t *testing.T) {
		p := p
		p.Network = NetworkAllow
		cp, _ := p.ToConfined()
		c, _, err := windowsACLConfine("cordon.exe", argv, cp, winRestricted)
		require.NoError(t, err)
		assert.NotContains(t, strings.Join(c.Unenforced, "\n"), "network deny")
	})
	t.Run("fallback runs with the current token and says so", func(t *testing.T) {
		c, _, err := windowsACLConfine("cordon.exe", argv, cp, winFallback("no luck"))
		require.NoError(t, err)
		assert.Equal(t, []string{"cordon.exe", HelperArg, "--windows-acl", "--token", "current", "--"}, c.Argv[:6],
			"no grant SIDs: they would mean nothing")
		assert.Equal(t, EnforcementPartial, c.Enforcement)
		require.NotEmpty(t, c.Unenforced)
		assert.Contains(t, c.Unenforced[0], "NOT enforced")
		assert.Contains(t, c.Unenforced[0], "no luck")
	})
	t.Run("empty command", func(t *testing.T) {
		_, _, err := windowsACLConfine("cordon.exe", nil, cp, winRestricted)
		assert.Error(t, err)
	})
	t.Run("a danger policy never gets here", func(t *testing.T) {
		p := p
		p.Mode = DangerFullAccess
		_, err := p.ToConfined()
		assert.ErrorIs(t, err, errDangerNotConfinable)
	})
}

func TestWindowsACLConfineRefusesLinkedProtectedPaths(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need a privilege on Windows")
	}
	elsewhere := t.TempDir()
	ws, tmp := t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(ws, ".vscode")))
	svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: ws}}
	p, err := svc.Resolve(Request{TmpDir: tmp})
	require.NoError(t, err)
	cp, err := p.ToConfined()
	require.NoError(t, err)
	_, _, err = windowsACLConfine("cordon.exe", []string{"cmd"}, cp, winRestricted)
	assert.ErrorIs(t, err, errProtectedSymlink, "as for every backend")
	assert.ErrorIs(t, err, winacl.ErrProtectedLink)
	assert.ErrorContains(t, err, ".vscode")
	assert.True(t, strings.HasPrefix(err.Error(), errProtectedSymlink.Error()+": "), "the message is the planner's: %v", err)
}

func TestWindowsACLDenialSignatures(t *testing.T) {
	for _, out := range []string{
		"Access is denied.",
		`out-file : Access to the path 'C:\Windows\x.txt' is denied.`,
		"PermissionError: [WinError 5] Access is denied: 'C:\\x'",
		"bash: /c/Windows/x: Permission denied",
		"Error: EPERM: operation not permitted, open 'C:\\x'",
		"touch: cannot touch '/c/x': Permission denied",
	} {
		assert.True(t, looksDenied(winacl.DenialSignatures, out), out)
	}
	assert.False(t, looksDenied(winacl.DenialSignatures, "fatal: not a git repository"))
}

func TestWindowsACLRunnerFailureRules(t *testing.T) {
	sig, ok := matchAny(windowsACLRunnerRules, 125, "cordon: sandbox runner failed: CreateRestrictedToken: The parameter is incorrect.\n")
	assert.True(t, ok)
	assert.Equal(t, "cordon: sandbox runner failed", sig)
	_, ok = matchAny(windowsACLRunnerRules, 125, "my tool exits 125 on its own\n")
	assert.False(t, ok, "a command may exit 125 itself")
	_, ok = matchAny(windowsACLRunnerRules, 1, "cordon: sandbox runner failed: quoted by the command\n")
	assert.False(t, ok, "only the runner's own exit code")
	_, ok = matchAny(windowsACLRunnerRules, 0, "cordon: sandbox runner failed")
	assert.False(t, ok, "exit 0 never matches")
	// internal/winacl's TestRunnerExitCodes checks that the
	// runner reports its failures so.
	_, ok = matchAny(windowsACLRunnerRules, winacl.FailureExit, winacl.FailurePrefix+": x\n")
	assert.True(t, ok, "the rule is made of what the runner reports")
}

// TestWindowsACLRefusesNetworkRestricted: the backend cannot keep a
// command on the proxy, so it fails closed rather than set variables that
// only look like a restriction.
func TestWindowsACLRefusesNetworkRestricted(t *testing.T) {
	ws, tmp := t.TempDir(), t.TempDir()
	svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: ws, Network: NetworkRestricted}}
	p, err := svc.Resolve(Request{TmpDir: tmp})
	require.NoError(t, err)
	cp, err := p.ToConfined()
	require.NoError(t, err)
	_, _, err = windowsACLConfine("cordon.exe", []string{"cmd"}, cp, winRestricted)
	var ue *UnavailableError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, ue.Reason, "network restricted")
}
