package sandbox

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

func winWrite(t *testing.T, parts ...string) string {
	t.Helper()
	p := filepath.Join(parts...)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	return p
}

// winDenyFor returns the deny entry on path for sid with the given
// inheritance, or fails.
func winDenyFor(t *testing.T, plan windowsACLPlan, path, sid string, inherit bool) winACE {
	t.Helper()
	for _, d := range plan.Denies {
		if d.Path == path && d.SID == sid && d.Inherit == inherit {
			return d
		}
	}
	t.Fatalf("no deny entry (inherit=%v) on %s for %s in %+v", inherit, path, sid, plan.Denies)
	return winACE{}
}

func TestWindowsACLGrantSIDIsStableAndDistinct(t *testing.T) {
	a := windowsGrantSID(`C:\Users\me\src\proj`)
	assert.Equal(t, a, windowsGrantSID(`C:\Users\me\src\proj`), "the same root gets the same SID in every process")
	assert.Equal(t, a, windowsGrantSID(`c:\users\ME\src\proj`), "NTFS is case-insensitive")
	assert.NotEqual(t, a, windowsGrantSID(`C:\Users\me\src\proj2`))
	assert.True(t, strings.HasPrefix(a, "S-1-9-1668248164-1-"), a)
	assert.True(t, validGrantSID(a), a)
	assert.Len(t, strings.Split(a, "-"), 9, "S-1-9, the cordon marker, the kind and four hash sub-authorities")

	obj, err := newWindowsObjectSID(bytes.NewReader(bytes.Repeat([]byte{0xff}, 16)))
	require.NoError(t, err)
	assert.Equal(t, "S-1-9-1668248164-2-4294967295-4294967295-4294967295-4294967295", obj)
	assert.False(t, validGrantSID(obj), "an object SID is not a grant SID")
	_, err = newWindowsObjectSID(bytes.NewReader(nil))
	assert.Error(t, err)
}

func TestWindowsACLPlanGrantsEveryWritableRoot(t *testing.T) {
	t.Run("workspace-write", func(t *testing.T) {
		p := winTestPolicy(t, WorkspaceWrite, nil)
		plan, err := planWindowsACL(p)
		require.NoError(t, err)
		require.Equal(t, []string{p.WorkspaceRoot, p.TmpDir}, p.WritableRoots)
		require.Len(t, plan.Grants, 2)
		for i, root := range p.WritableRoots {
			g := plan.Grants[i]
			assert.Equal(t, winACE{Path: root, SID: windowsGrantSID(root), Mask: winGrantMask, Inherit: true}, g)
			assert.Zero(t, g.Mask&(winWriteDAC|winWriteOwner), "a confined command may never change permissions")
			// The root itself cannot be deleted or moved away.
			assert.NotZero(t, winDenyFor(t, plan, root, g.SID, false).Mask&winDelete)
		}
		assert.Equal(t, []string{windowsGrantSID(p.WorkspaceRoot), windowsGrantSID(p.TmpDir)}, plan.TokenSIDs)
	})
	t.Run("read-only gets the session tmp only", func(t *testing.T) {
		p := winTestPolicy(t, ReadOnly, func(ws string) { winMkdir(t, ws, ".git", "hooks") })
		plan, err := planWindowsACL(p)
		require.NoError(t, err)
		assert.Equal(t, []string{windowsGrantSID(p.TmpDir)}, plan.TokenSIDs)
		require.Len(t, plan.Grants, 1)
		assert.Equal(t, p.TmpDir, plan.Grants[0].Path)
		for _, d := range plan.Denies {
			assert.False(t, Within(d.Path, p.WorkspaceRoot), "nothing to protect in a workspace nobody may write: %+v", d)
		}
	})
	t.Run("extra roots", func(t *testing.T) {
		extra := t.TempDir()
		ws, tmp := t.TempDir(), t.TempDir()
		svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: ws, ExtraWriteAllow: []string{extra}}}
		p, err := svc.Resolve(Request{TmpDir: tmp})
		require.NoError(t, err)
		plan, err := planWindowsACL(p)
		require.NoError(t, err)
		realExtra, _ := filepath.EvalSymlinks(extra)
		assert.Contains(t, plan.TokenSIDs, windowsGrantSID(realExtra))
		assert.Len(t, plan.Grants, 3)
	})
}

func TestWindowsACLPlanProtectsExistingPaths(t *testing.T) {
	p := winTestPolicy(t, WorkspaceWrite, func(ws string) {
		winMkdir(t, ws, ".git", "hooks")
		winWrite(t, ws, ".git", "config")
		winMkdir(t, ws, ".vscode")
		winWrite(t, ws, ".bashrc")
	})
	ws := p.WorkspaceRoot
	sid := windowsGrantSID(ws)
	plan, err := planWindowsACL(p)
	require.NoError(t, err)

	hooks := winDenyFor(t, plan, filepath.Join(ws, ".git", "hooks"), sid, true)
	assert.Equal(t, uint32(winDenyWriteMask), hooks.Mask, "a protected directory: nothing written in or under it")
	vscode := winDenyFor(t, plan, filepath.Join(ws, ".vscode"), sid, true)
	assert.Equal(t, uint32(winDenyWriteMask), vscode.Mask)
	config := winDenyFor(t, plan, filepath.Join(ws, ".git", "config"), sid, false)
	assert.Equal(t, uint32(winDenyWriteMask), config.Mask, "a protected file: its entry does not inherit")
	winDenyFor(t, plan, filepath.Join(ws, ".bashrc"), sid, false)

	// .git is pinned (cannot be renamed away and replaced) and cannot
	// lose its protected entries; the workspace cannot lose .git.
	git := winDenyFor(t, plan, filepath.Join(ws, ".git"), sid, false)
	assert.Equal(t, uint32(winDelete|winFileDeleteChild), git.Mask)
	root := winDenyFor(t, plan, ws, sid, false)
	assert.Equal(t, uint32(winDelete|winFileDeleteChild), root.Mask)
	for _, d := range plan.Denies {
		assert.True(t, d.Deny)
	}

	assert.Contains(t, plan.Missing, filepath.Join(ws, ".zshrc"))
	assert.Contains(t, plan.Missing, filepath.Join(ws, ".mcp.json"))
	assert.NotContains(t, plan.Missing, filepath.Join(ws, ".git", "hooks"))
	for _, d := range plan.Denies {
		assert.NotEqual(t, filepath.Join(ws, ".zshrc"), d.Path, "nothing is made on the host for a missing path")
	}
	for _, m := range plan.Missing {
		_, err := os.Lstat(m)
		assert.True(t, errors.Is(err, os.ErrNotExist), "planning leaves nothing behind: %s", m)
	}
}

func TestWindowsACLPlanPinsTheExistingPartOfAMissingPath(t *testing.T) {
	p := winTestPolicy(t, WorkspaceWrite, func(ws string) { winMkdir(t, ws, ".git") })
	ws, sid := p.WorkspaceRoot, windowsGrantSID(p.WorkspaceRoot)
	plan, err := planWindowsACL(p)
	require.NoError(t, err)
	assert.Contains(t, plan.Missing, filepath.Join(ws, ".git", "hooks"))
	assert.Contains(t, plan.Missing, filepath.Join(ws, ".git", "config"))
	git := winDenyFor(t, plan, filepath.Join(ws, ".git"), sid, false)
	assert.Equal(t, uint32(winDelete), git.Mask, ".git is pinned but stays writable inside")
	for _, d := range plan.Denies {
		assert.False(t, d.Path == filepath.Join(ws, ".git") && d.Inherit, "no write deny on a merely pinned parent")
	}
}

func TestWindowsACLPlanKeepsAGitFileReadOnly(t *testing.T) {
	// A linked worktree: .git is a file naming a gitdir elsewhere.
	gitdir := filepath.Join(t.TempDir(), "worktrees", "ws")
	require.NoError(t, os.MkdirAll(gitdir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644))
	p := winTestPolicy(t, WorkspaceWrite, func(ws string) {
		require.NoError(t, os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(gitdir, "gitdir"), []byte(filepath.Join(ws, ".git")+"\n"), 0o644))
	})
	ws := p.WorkspaceRoot
	plan, err := planWindowsACL(p)
	require.NoError(t, err)
	d := winDenyFor(t, plan, filepath.Join(ws, ".git"), windowsGrantSID(ws), false)
	assert.Equal(t, uint32(winDenyWriteMask), d.Mask)
	assert.NotContains(t, plan.Missing, filepath.Join(ws, ".git", "hooks"), "the .git file keeps hooks from being made")
	realGitdir, _ := filepath.EvalSymlinks(gitdir)
	assert.Contains(t, plan.TokenSIDs, windowsGrantSID(realGitdir), "the gitdir is a writable root of its own")
}

func TestWindowsACLPlanRefusesLinkedProtectedPaths(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need a privilege on Windows")
	}
	elsewhere := t.TempDir()
	ws, tmp := t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(ws, ".vscode")))
	svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: ws}}
	p, err := svc.Resolve(Request{TmpDir: tmp})
	require.NoError(t, err)
	_, err = planWindowsACL(p)
	assert.ErrorIs(t, err, errProtectedSymlink)
	assert.ErrorContains(t, err, ".vscode")
}

func TestWindowsACLPlanNestedRootsDenyForEachRoot(t *testing.T) {
	ws, tmp := t.TempDir(), t.TempDir()
	inner := winMkdir(t, ws, "sub")
	winMkdir(t, inner, ".vscode")
	svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: ws, ExtraWriteAllow: []string{inner}}}
	p, err := svc.Resolve(Request{TmpDir: tmp})
	require.NoError(t, err)
	plan, err := planWindowsACL(p)
	require.NoError(t, err)
	target := filepath.Join(p.WorkspaceRoot, "sub", ".vscode")
	// Both SIDs reach sub/.vscode (the outer grant inherits into it); a
	// deny for each keeps it read-only whichever the token carries.
	winDenyFor(t, plan, target, windowsGrantSID(p.WorkspaceRoot), true)
	winDenyFor(t, plan, target, windowsGrantSID(filepath.Join(p.WorkspaceRoot, "sub")), true)
}

func TestWindowsACLPlanProtectsARootThatIsProtected(t *testing.T) {
	ws, tmp := t.TempDir(), t.TempDir()
	// cordon's state directory used as the workspace: it is protected.
	svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: ws, StateDir: ws}}
	p, err := svc.Resolve(Request{TmpDir: tmp})
	require.NoError(t, err)
	plan, err := planWindowsACL(p)
	require.NoError(t, err)
	d := winDenyFor(t, plan, p.WorkspaceRoot, windowsGrantSID(p.WorkspaceRoot), true)
	assert.Equal(t, uint32(winDenyWriteMask), d.Mask)
}

func TestWindowsACLLimitsAndFallback(t *testing.T) {
	restricted := decideWindowsToken(nil)
	assert.Equal(t, winTokenRestricted, restricted.Kind)
	enf, un := windowsACLLimits(restricted)
	assert.Equal(t, EnforcementPartial, enf, "reads and the network are never restricted")
	joined := strings.Join(un, "\n")
	for _, want := range []string{"read-deny list", "network deny", "do not exist yet", "Everyone", "isolation"} {
		assert.Contains(t, joined, want)
	}
	assert.NotContains(t, joined, "writes outside the writable roots")

	fallback := decideWindowsToken(errors.New("CreateRestrictedToken: Access is denied."))
	assert.Equal(t, winTokenCurrent, fallback.Kind)
	enf, un = windowsACLLimits(fallback)
	assert.Equal(t, EnforcementPartial, enf)
	require.NotEmpty(t, un)
	assert.Contains(t, un[0], "writes outside the writable roots: NOT enforced", "the worst gap comes first")
	assert.Contains(t, un[0], "CreateRestrictedToken: Access is denied.", "with the reason")
	assert.Contains(t, fallback.describe(), "fallback")
}

func TestWindowsACLConfine(t *testing.T) {
	p := winTestPolicy(t, WorkspaceWrite, func(ws string) { winMkdir(t, ws, ".git", "hooks") })
	p.Network = NetworkDeny
	p.ReadDeny = []string{"/home/me/.ssh"}
	cp, err := p.ToConfined()
	require.NoError(t, err)
	argv := []string{"bash", "-c", "echo hi > out.txt"}

	c, plan, err := windowsACLConfine(`C:\cordon\cordon.exe`, argv, cp, decideWindowsToken(nil))
	require.NoError(t, err)
	assert.Equal(t, windowsACLName, c.Backend)
	want := []string{`C:\cordon\cordon.exe`, HelperArg, "--windows-acl", "--token", "restricted"}
	for _, sid := range plan.TokenSIDs {
		want = append(want, "--sid", sid)
	}
	want = append(append(want, "--"), argv...)
	assert.Equal(t, want, c.Argv, "[runner] [profile args...] [--] [original argv...]")
	assert.Empty(t, c.ExtraFiles, "exec.Cmd cannot pass extra descriptors on Windows")
	assert.Zero(t, c.statusFD)
	assert.Equal(t, EnforcementPartial, c.Enforcement)
	assert.Contains(t, c.Env, "TEMP="+p.TmpDir)
	assert.Contains(t, c.Env, "TMP="+p.TmpDir)
	assert.Contains(t, c.Env, "TMPDIR="+p.TmpDir)
	assert.Equal(t, windowsACLDenialSignatures, c.DenialSignatures)
	assert.Equal(t, windowsACLRunnerRules, c.RunnerFailureRules)
	un := strings.Join(c.Unenforced, "\n")
	assert.Contains(t, un, "network deny")
	assert.Contains(t, un, "read-deny list")
	assert.Contains(t, un, filepath.Join(p.WorkspaceRoot, ".bashrc"), "missing protected paths are named")
	assert.NotContains(t, un, filepath.Join(p.WorkspaceRoot, ".git", "hooks"), "an existing one is enforced")

	parsed, err := parseWindowsACLRunnerArgs(c.Argv[2:])
	require.NoError(t, err)
	assert.Equal(t, argv, parsed.argv)
	assert.Equal(t, plan.TokenSIDs, parsed.sids)

	t.Run("network allowed is not listed", func(t *testing.T) {
		p := p
		p.Network = NetworkAllow
		cp, _ := p.ToConfined()
		c, _, err := windowsACLConfine("cordon.exe", argv, cp, decideWindowsToken(nil))
		require.NoError(t, err)
		assert.NotContains(t, strings.Join(c.Unenforced, "\n"), "network deny")
	})
	t.Run("fallback runs with the current token and says so", func(t *testing.T) {
		c, _, err := windowsACLConfine("cordon.exe", argv, cp, decideWindowsToken(errors.New("no luck")))
		require.NoError(t, err)
		assert.Equal(t, []string{"cordon.exe", HelperArg, "--windows-acl", "--token", "current", "--"}, c.Argv[:6],
			"no grant SIDs: they would mean nothing")
		assert.Equal(t, EnforcementPartial, c.Enforcement)
		require.NotEmpty(t, c.Unenforced)
		assert.Contains(t, c.Unenforced[0], "NOT enforced")
		assert.Contains(t, c.Unenforced[0], "no luck")
	})
	t.Run("empty command", func(t *testing.T) {
		_, _, err := windowsACLConfine("cordon.exe", nil, cp, decideWindowsToken(nil))
		assert.Error(t, err)
	})
	t.Run("a danger policy never gets here", func(t *testing.T) {
		p := p
		p.Mode = DangerFullAccess
		_, err := p.ToConfined()
		assert.ErrorIs(t, err, errDangerNotConfinable)
	})
}

func TestWindowsACLRunnerArgs(t *testing.T) {
	sid := windowsGrantSID(`C:\ws`)
	cfg := windowsACLRunnerConfig{token: winTokenRestricted, sids: []string{sid}, argv: []string{"git", "--", "status"}}
	got, err := parseWindowsACLRunnerArgs(cfg.args())
	require.NoError(t, err)
	assert.Equal(t, cfg, got, "a -- inside the command is the command's")

	for _, tc := range []struct {
		args []string
		err  string
	}{
		{nil, "needs --windows-acl first"},
		{[]string{"--landlock", "1", "--", "true"}, "needs --windows-acl first"},
		{[]string{"--windows-acl", "--", "true"}, "--token is required"},
		{[]string{"--windows-acl", "--token", "admin", "--", "true"}, `unknown token "admin"`},
		{[]string{"--windows-acl", "--token", "restricted", "--sid", "S-1-5-18", "--", "true"}, "not a cordon grant SID"},
		{[]string{"--windows-acl", "--token", "restricted", "--sid", winSIDGrantPrefix + "1-2-3", "--", "true"}, "not a cordon grant SID"},
		{[]string{"--windows-acl", "--token", "restricted", "--sid"}, "--sid needs a value"},
		{[]string{"--windows-acl", "--token", "restricted", "--"}, "no command after --"},
		{[]string{"--windows-acl", "--token", "restricted", "true"}, `unknown runner argument "true"`},
		{[]string{"--windows-acl", "--token", "restricted"}, "missing -- before the command"},
	} {
		_, err := parseWindowsACLRunnerArgs(tc.args)
		assert.ErrorContains(t, err, tc.err, "%q", tc.args)
	}
}

func TestWindowsACLTokenRecipe(t *testing.T) {
	grants := []string{windowsGrantSID(`C:\ws`), windowsGrantSID(`C:\tmp\s1`)}
	obj := winSIDObjectPrefix + "1-2-3-4"
	r := windowsTokenRecipeFor(grants, obj)
	assert.Equal(t, uint32(0x1|0x4|0x8), r.Flags, "DISABLE_MAX_PRIVILEGE | LUA_TOKEN | WRITE_RESTRICTED")
	assert.Equal(t, []string{grants[0], grants[1], obj, winSIDEveryone}, r.RestrictingSIDs)
	assert.True(t, r.AddLogonSID)
	assert.Contains(t, r.DisableSIDs, "S-1-5-32-544", "no administrator rights, even from an elevated cordon")
	assert.Equal(t, []string{winSIDLocalSystem, obj}, r.DefaultDACLSIDs)
	assert.True(t, r.DefaultDACLUser)
	assert.Len(t, grants, 2, "the caller's slice is not appended to")

	ro := windowsTokenRecipeFor(nil, obj)
	assert.Equal(t, []string{obj, winSIDEveryone}, ro.RestrictingSIDs, "no grant SID: writes only where Everyone may")
}

func TestWindowsACLEnv(t *testing.T) {
	host := []string{
		`Path=C:\Windows\system32;C:\Program Files\Git\cmd`,
		`SYSTEMROOT=C:\Windows`,
		`ComSpec=C:\Windows\system32\cmd.exe`,
		`OPENAI_API_KEY=sk-secret`,
		`USERPROFILE=C:\Users\me`,
		`=C:=C:\work`, // cmd's per-drive cwd entries
	}
	env := windowsACLEnv(host, `C:\state\tmp\abc`)
	assert.Contains(t, env, `PATH=C:\Windows\system32;C:\Program Files\Git\cmd`, "found whatever its case")
	assert.Contains(t, env, `SystemRoot=C:\Windows`)
	assert.Contains(t, env, `ComSpec=C:\Windows\system32\cmd.exe`)
	assert.Contains(t, env, `USERPROFILE=C:\Users\me`)
	assert.Contains(t, env, `TEMP=C:\state\tmp\abc`)
	assert.Contains(t, env, `TMP=C:\state\tmp\abc`)
	assert.Contains(t, env, `TMPDIR=C:\state\tmp\abc`)
	for _, kv := range env {
		assert.NotContains(t, kv, "sk-secret", "secrets stay out")
		assert.False(t, strings.HasPrefix(kv, "="))
	}
	assert.NotContains(t, strings.Join(windowsACLEnv(host, ""), "\n"), "TEMP=", "no session tmp, no redirection")

	merged := mergeEnv([]string{"HOME=/h", "TEMP=/old"}, env)
	assert.Contains(t, merged, `TEMP=C:\state\tmp\abc`)
	assert.NotContains(t, merged, "TEMP=/old")
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
		assert.True(t, looksDenied(windowsACLDenialSignatures, out), out)
	}
	assert.False(t, looksDenied(windowsACLDenialSignatures, "fatal: not a git repository"))
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
}

func TestWindowsACLRunnerExitCodes(t *testing.T) {
	for _, tc := range []struct {
		errno  uint32
		code   int
		runner bool
	}{
		{winErrorFileNotFound, 127, false},
		{winErrorPathNotFound, 127, false},
		{winErrorAccessDenied, 126, false},
		{winErrorBadExeFormat, 126, false},
		{winErrorElevationRequired, 126, false},
		{1314, 125, true}, // ERROR_PRIVILEGE_NOT_HELD: the token was refused
	} {
		code, runner := windowsStartFailure(tc.errno)
		assert.Equal(t, tc.code, code, "errno %d", tc.errno)
		assert.Equal(t, tc.runner, runner, "errno %d", tc.errno)
	}

	code, failure := windowsChildExit(3)
	assert.Equal(t, 3, code)
	assert.Empty(t, failure)
	code, failure = windowsChildExit(0xC000013A) // STATUS_CONTROL_C_EXIT: the command's own end
	assert.Equal(t, 0xC000013A, code)
	assert.Empty(t, failure)
	code, failure = windowsChildExit(winStatusDLLInitFailed)
	assert.Equal(t, 125, code)
	assert.Contains(t, failure, "STATUS_DLL_INIT_FAILED")
	_, ok := matchAny(windowsACLRunnerRules, code, "cordon: sandbox runner failed: "+failure)
	assert.True(t, ok, "the runner reports it the way its rule recognises")
}

func TestWindowsACLProbeArgv(t *testing.T) {
	permissive, write := windowsACLProbeArgv(`C:\probe dir\workspace\probe-ok`, `C:\probe dir\canary`)
	assert.Equal(t, []string{"cmd.exe", "/d", "/c", "exit", "0"}, permissive)
	assert.Equal(t, "cmd.exe", write[0])
	joined := strings.Join(write, " ")
	assert.Contains(t, joined, `ok> C:\probe dir\workspace\probe-ok`)
	assert.Contains(t, joined, `breach>> C:\probe dir\canary || exit 1`,
		"a failed redirection only shows through ||")
	for _, a := range write[3:] {
		if strings.ContainsAny(a, " ") {
			assert.True(t, a == `C:\probe dir\workspace\probe-ok` || a == `C:\probe dir\canary`,
				"only the paths may need quoting (cmd.exe does not undo \\\" escapes): %q", a)
		}
	}
}
