package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseModeAndOrder(t *testing.T) {
	for _, m := range allModes {
		got, err := ParseMode(string(m))
		require.NoError(t, err)
		assert.Equal(t, m, got)
	}
	_, err := ParseMode("full")
	assert.ErrorContains(t, err, `unknown mode "full"`)
	assert.ErrorContains(t, err, "read-only, workspace-write, danger-full-access")
	assert.True(t, WorkspaceWrite.WiderThan(ReadOnly))
	assert.True(t, DangerFullAccess.WiderThan(ReadOnly))
	assert.False(t, ReadOnly.WiderThan(ReadOnly))
	assert.False(t, Mode("bogus").WiderThan(ReadOnly))
	assert.Equal(t, ReadOnly, Narrowest(WorkspaceWrite, Mode("bogus")))
	assert.Equal(t, WorkspaceWrite, Narrowest(WorkspaceWrite, DangerFullAccess))
}

func TestResolvePriority(t *testing.T) {
	ws := t.TempDir()
	fallback := t.TempDir()
	svc := PolicyService{
		Settings: Settings{Mode: ReadOnly, Workspace: ws, FallbackRoot: fallback},
	}
	p, err := svc.Resolve(Request{SessionID: "other"})
	require.NoError(t, err)
	assert.Equal(t, ReadOnly, p.Mode, "deployment default")
	p, err = svc.Resolve(Request{SessionID: "s1", SessionMode: WorkspaceWrite})
	require.NoError(t, err)
	assert.Equal(t, WorkspaceWrite, p.Mode, "the session log outranks the default")
	p, err = svc.Resolve(Request{SessionID: "s1", SessionMode: WorkspaceWrite, Override: DangerFullAccess})
	require.NoError(t, err)
	assert.Equal(t, DangerFullAccess, p.Mode, "an approved escalation outranks the session")

	real, _ := filepath.EvalSymlinks(ws)
	assert.Equal(t, real, p.WorkspaceRoot)
	svc.Settings.Workspace = ""
	p, err = svc.Resolve(Request{})
	require.NoError(t, err)
	realFallback, _ := filepath.EvalSymlinks(fallback)
	assert.Equal(t, realFallback, p.WorkspaceRoot, "fallback root for a session without a cwd")
	own := t.TempDir()
	p, err = svc.Resolve(Request{Workspace: own})
	require.NoError(t, err)
	realOwn, _ := filepath.EvalSymlinks(own)
	assert.Equal(t, realOwn, p.WorkspaceRoot, "the session's cwd comes first")

	svc.Settings.FallbackRoot = ""
	_, err = svc.Resolve(Request{})
	assert.ErrorContains(t, err, "no workspace")
}

func TestWritableRoots(t *testing.T) {
	base := t.TempDir()
	base, _ = filepath.EvalSymlinks(base)
	ws, extra, tmp := filepath.Join(base, "ws"), filepath.Join(base, "extra"), filepath.Join(base, "tmp")
	for _, d := range []string{ws, extra, tmp} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	link := filepath.Join(base, "link-to-ws")
	require.NoError(t, os.Symlink(ws, link))
	p := ExecutionPolicy{Mode: WorkspaceWrite, WorkspaceRoot: link, TmpDir: tmp,
		ExtraWriteAllow: []string{extra, ws + "/", filepath.Join(base, "missing")}}
	assert.Equal(t, []string{ws, extra, tmp}, writableRoots(p, nil), "canonical, deduplicated, missing roots dropped")
	p.Mode = ReadOnly
	assert.Equal(t, []string{tmp}, writableRoots(p, nil))
	p.Mode = DangerFullAccess
	assert.Equal(t, []string{"/"}, writableRoots(p, nil))
	p.Mode = "bogus"
	assert.Empty(t, writableRoots(p, nil))
}

func TestLinkedWorktreeRoots(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	common := filepath.Join(base, "main", ".git")
	gitdir := filepath.Join(common, "worktrees", "wt")
	ws := filepath.Join(base, "wt")
	require.NoError(t, os.MkdirAll(gitdir, 0o755))
	require.NoError(t, os.MkdirAll(ws, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(gitdir, "gitdir"), []byte(filepath.Join(ws, ".git")+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644))
	svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: ws}}
	p, err := svc.Resolve(Request{})
	require.NoError(t, err)
	assert.Equal(t, []string{ws, gitdir, common}, p.WritableRoots)
	for _, dir := range []string{gitdir, common} {
		assert.Contains(t, p.Protected, filepath.Join(dir, "hooks"), "a linked worktree's git dirs keep their hooks protected")
		assert.Contains(t, p.Protected, filepath.Join(dir, "config"))
	}
}

func TestToConfinedIsOneWay(t *testing.T) {
	_, err := ExecutionPolicy{Mode: DangerFullAccess}.ToConfined()
	assert.ErrorIs(t, err, errDangerNotConfinable)
	_, err = ExecutionPolicy{Mode: "bogus"}.ToConfined()
	assert.Error(t, err)
	cp, err := ExecutionPolicy{Mode: ReadOnly, TmpDir: "/t", WritableRoots: []string{"/t"}}.ToConfined()
	require.NoError(t, err)
	assert.Equal(t, ReadOnly, cp.Policy().Mode)
	assert.PanicsWithValue(t, "[sandbox invariant] read-only policy has writable root \"/ws\"", func() {
		ExecutionPolicy{Mode: ReadOnly, WritableRoots: []string{"/ws"}}.ToConfined()
	}, "development builds panic on a broken invariant")
}

func TestRunnerFailureRuleMatches(t *testing.T) {
	rule := RunnerFailureRule{
		AllowedExitCodes:   []int{1},
		FatalSignatures:    []string{"bwrap: "},
		InformationalLines: []string{"bwrap: note: using fallback"},
	}
	cases := []struct {
		name   string
		code   int
		stderr string
		want   string
	}{
		{"exit 0 never matches", 0, "bwrap: Can't mount proc", ""},
		{"exit code not allowed", 2, "bwrap: Can't mount proc", ""},
		{"fatal signature", 1, "bwrap: Can't mount proc on /newroot/proc", "bwrap: "},
		{"case-insensitive", 1, "BWRAP: setting up uid map: Permission denied", "bwrap: "},
		{"informational line dropped", 1, "  BWRAP: NOTE: USING FALLBACK  \nmake: *** Error 1", ""},
		{"ordinary failure", 1, "make: *** [all] Error 1", ""},
	}
	for _, c := range cases {
		sig, ok := rule.Matches(c.code, c.stderr)
		assert.Equal(t, c.want != "", ok, c.name)
		assert.Equal(t, c.want, sig, c.name)
	}
	any := RunnerFailureRule{FatalSignatures: []string{"sandbox-exec:"}}
	_, ok := any.Matches(77, "sandbox-exec: profile error")
	assert.True(t, ok, "empty AllowedExitCodes allows any non-zero code")
}

func TestEnviron(t *testing.T) {
	host := []string{"PATH=/bin", "HOME=/h", "AWS_SECRET_ACCESS_KEY=s", "GITHUB_TOKEN=t", "OPENAI_API_KEY=o",
		"LC_ALL=C", "GOPATH=/g", "DOCKER_HOST=tcp://x", "NOEQUALS"}
	assert.Equal(t, []string{"PATH=/bin", "HOME=/h", "LC_ALL=C"}, Environ(host, nil))
	assert.Equal(t, []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "GOPATH=/g"}, Environ(host, []string{"GOPATH", "DOCKER_HOST"}))
	assert.Equal(t, []string{"A=1", "B=3"}, mergeEnv([]string{"A=1", "B=2"}, []string{"B=3"}))
}

func TestClientRootsOnlyNarrow(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	ws, sub, other, tmp, outside := filepath.Join(base, "ws"), filepath.Join(base, "ws", "sub"), filepath.Join(base, "ws", "other"),
		filepath.Join(base, "tmp"), filepath.Join(base, "outside")
	for _, d := range []string{sub, other, tmp, outside} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	p := ExecutionPolicy{Mode: WorkspaceWrite, WorkspaceRoot: ws, TmpDir: tmp}
	p.ClientRoots = []string{sub, outside}
	assert.Equal(t, []string{sub, tmp}, writableRoots(p, nil), "a root inside the workspace narrows it; one outside adds nothing")
	p.ClientRoots = []string{base}
	assert.Equal(t, []string{ws, tmp}, writableRoots(p, nil), "a wider client root does not widen")
	p.ClientRoots = []string{outside}
	assert.Equal(t, []string{ws, tmp}, writableRoots(p, nil), "client roots that hold no writable root are set aside")
	_, setAside := narrowByClient([]string{ws, tmp}, p, nil)
	assert.True(t, setAside)
	_, setAside = narrowByClient([]string{ws, tmp}, ExecutionPolicy{Mode: WorkspaceWrite, TmpDir: tmp, ClientRoots: []string{sub, outside}}, nil)
	assert.False(t, setAside, "a root inside the workspace narrows")
	p.Mode = ReadOnly
	p.ClientRoots = []string{ws}
	assert.Equal(t, []string{tmp}, writableRoots(p, nil))
}

// TestOutermostGuardPaths: a guarded path beneath another is dropped (the
// other's tree holds it), siblings that share a prefix are not, and
// nothing is dropped twice.
func TestOutermostGuardPaths(t *testing.T) {
	got := outermost([]string{"/w/.git", "/w/.git/hooks", "/w/.github", "/w/.git/hooks/pre-commit", "/w/.envrc", "/w/a/.git", "/"})
	assert.Equal(t, []string{"/"}, got)
	got = outermost([]string{"/w/.git", "/w/.git/hooks", "/w/.github", "/w/.git/hooks/pre-commit", "/w/.envrc", "/w/a/.git", "/w/.vscode/"})
	assert.Equal(t, []string{"/w/.git", "/w/.github", "/w/.envrc", "/w/a/.git", "/w/.vscode/"}, got)
}

func TestUnavailableErrorIsUnavailable(t *testing.T) {
	assert.True(t, errors.Is(&UnavailableError{Reason: "x"}, errUnavailable))
}
