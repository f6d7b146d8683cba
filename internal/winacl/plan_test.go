package winacl

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cordonhq/cordon/internal/pathx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testMode is the policy mode testPolicy builds for.
type testMode int

const (
	readOnly testMode = iota
	workspaceWrite
)

// testProtectedNames stand for sandbox.DefaultProtectedNames, which
// Resolve protects beneath every writable root but the session tmp.
var testProtectedNames = []string{".cordon", "cordon.toml", ".bashrc", ".zshrc", ".vscode", ".idea", ".mcp.json", ".claude"}

// resolved is a Policy with the workspace it was made for.
type resolved struct {
	Policy
	WorkspaceRoot string
}

// testPolicy is what sandbox's Resolve makes of a fresh workspace, with a
// session tmp and whatever the setup function puts in the workspace
// first: the workspace and the tmp as writable roots (the tmp only, in
// read-only), the protected names beneath the workspace, and git's paths
// when setup made a repository (sandbox/protected.go, sandbox/internal/gitrepo).
func testPolicy(t *testing.T, mode testMode, setup func(ws string)) resolved {
	t.Helper()
	ws, tmp := realTempDir(t), realTempDir(t)
	if setup != nil {
		setup(ws)
	}
	p := resolved{WorkspaceRoot: ws}
	p.TmpDir = tmp
	if mode == readOnly {
		p.WritableRoots = []string{tmp}
		return p
	}
	p.WritableRoots = []string{ws, tmp}
	p.Protected = protectedBeneath(ws)
	if fi, err := os.Lstat(filepath.Join(ws, ".git")); err == nil && fi.IsDir() {
		p.Protected = append(p.Protected, filepath.Join(ws, ".gitmodules"))
		p.Protected = append(p.Protected, gitPaths(filepath.Join(ws, ".git"))...)
	}
	return p
}

// protectedBeneath lists testProtectedNames beneath each root.
func protectedBeneath(roots ...string) []string {
	var out []string
	for _, r := range roots {
		for _, name := range testProtectedNames {
			out = append(out, filepath.Join(r, name))
		}
	}
	return out
}

// gitPaths are what Resolve protects of a gitdir (sandbox's repoProtected).
func gitPaths(gitdir string) []string {
	return []string{
		filepath.Join(gitdir, "hooks"), filepath.Join(gitdir, "config"),
		filepath.Join(gitdir, "config.worktree"), filepath.Join(gitdir, "commondir"),
	}
}

// realTempDir is t.TempDir as Resolve sees it: with its links resolved.
func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func testMkdir(t *testing.T, parts ...string) string {
	t.Helper()
	p := filepath.Join(parts...)
	require.NoError(t, os.MkdirAll(p, 0o755))
	return p
}

func testWrite(t *testing.T, parts ...string) string {
	t.Helper()
	p := filepath.Join(parts...)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	return p
}

// denyFor returns the deny entry on path for sid with the given
// inheritance, or fails.
func denyFor(t *testing.T, plan aclPlan, path, sid string, inherit bool) ace {
	t.Helper()
	for _, d := range plan.Denies {
		if d.Path == path && d.SID == sid && d.Inherit == inherit {
			return d
		}
	}
	t.Fatalf("no deny entry (inherit=%v) on %s for %s in %+v", inherit, path, sid, plan.Denies)
	return ace{}
}

func TestPlanGrantsEveryWritableRoot(t *testing.T) {
	t.Run("workspace-write", func(t *testing.T) {
		p := testPolicy(t, workspaceWrite, nil)
		plan, err := makePlan(p.Policy)
		require.NoError(t, err)
		require.Equal(t, []string{p.WorkspaceRoot, p.TmpDir}, p.WritableRoots)
		require.Len(t, plan.Grants, 2)
		for i, root := range p.WritableRoots {
			g := plan.Grants[i]
			assert.Equal(t, ace{Path: root, SID: grantSID(root), Mask: grantMask, Inherit: true}, g)
			assert.Zero(t, g.Mask&(writeDAC|writeOwner), "a confined command may never change permissions")
			// The root itself cannot be deleted or moved away.
			assert.NotZero(t, denyFor(t, plan, root, g.SID, false).Mask&deleteAccess)
		}
		assert.Equal(t, []string{grantSID(p.WorkspaceRoot), grantSID(p.TmpDir)}, plan.TokenSIDs)
	})
	t.Run("read-only gets the session tmp only", func(t *testing.T) {
		p := testPolicy(t, readOnly, func(ws string) { testMkdir(t, ws, ".git", "hooks") })
		plan, err := makePlan(p.Policy)
		require.NoError(t, err)
		assert.Equal(t, []string{grantSID(p.TmpDir)}, plan.TokenSIDs)
		require.Len(t, plan.Grants, 1)
		assert.Equal(t, p.TmpDir, plan.Grants[0].Path)
		for _, d := range plan.Denies {
			assert.False(t, pathx.Within(d.Path, p.WorkspaceRoot), "nothing to protect in a workspace nobody may write: %+v", d)
		}
	})
	t.Run("extra roots", func(t *testing.T) {
		realExtra, ws, tmp := realTempDir(t), realTempDir(t), realTempDir(t)
		p := Policy{WritableRoots: []string{ws, realExtra, tmp}, Protected: protectedBeneath(ws, realExtra), TmpDir: tmp}
		plan, err := makePlan(p)
		require.NoError(t, err)
		assert.Contains(t, plan.TokenSIDs, grantSID(realExtra))
		assert.Len(t, plan.Grants, 3)
	})
}

func TestPlanProtectsExistingPaths(t *testing.T) {
	p := testPolicy(t, workspaceWrite, func(ws string) {
		testMkdir(t, ws, ".git", "hooks")
		testWrite(t, ws, ".git", "config")
		testMkdir(t, ws, ".vscode")
		testWrite(t, ws, ".bashrc")
	})
	ws := p.WorkspaceRoot
	sid := grantSID(ws)
	plan, err := makePlan(p.Policy)
	require.NoError(t, err)

	hooks := denyFor(t, plan, filepath.Join(ws, ".git", "hooks"), sid, true)
	assert.Equal(t, uint32(denyWriteMask), hooks.Mask, "a protected directory: nothing written in or under it")
	vscode := denyFor(t, plan, filepath.Join(ws, ".vscode"), sid, true)
	assert.Equal(t, uint32(denyWriteMask), vscode.Mask)
	config := denyFor(t, plan, filepath.Join(ws, ".git", "config"), sid, false)
	assert.Equal(t, uint32(denyWriteMask), config.Mask, "a protected file: its entry does not inherit")
	denyFor(t, plan, filepath.Join(ws, ".bashrc"), sid, false)

	// .git is pinned (cannot be renamed away and replaced) and cannot
	// lose its protected entries; the workspace cannot lose .git.
	git := denyFor(t, plan, filepath.Join(ws, ".git"), sid, false)
	assert.Equal(t, uint32(deleteAccess|fileDeleteChild), git.Mask)
	root := denyFor(t, plan, ws, sid, false)
	assert.Equal(t, uint32(deleteAccess|fileDeleteChild), root.Mask)
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

func TestPlanPinsTheExistingPartOfAMissingPath(t *testing.T) {
	p := testPolicy(t, workspaceWrite, func(ws string) { testMkdir(t, ws, ".git") })
	ws, sid := p.WorkspaceRoot, grantSID(p.WorkspaceRoot)
	plan, err := makePlan(p.Policy)
	require.NoError(t, err)
	assert.Contains(t, plan.Missing, filepath.Join(ws, ".git", "hooks"))
	assert.Contains(t, plan.Missing, filepath.Join(ws, ".git", "config"))
	git := denyFor(t, plan, filepath.Join(ws, ".git"), sid, false)
	assert.Equal(t, uint32(deleteAccess), git.Mask, ".git is pinned but stays writable inside")
	for _, d := range plan.Denies {
		assert.False(t, d.Path == filepath.Join(ws, ".git") && d.Inherit, "no write deny on a merely pinned parent")
	}
}

func TestPlanKeepsAGitFileReadOnly(t *testing.T) {
	// A linked worktree: .git is a file naming a gitdir elsewhere.
	common := realTempDir(t)
	gitdir := filepath.Join(common, "worktrees", "ws")
	require.NoError(t, os.MkdirAll(gitdir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(gitdir, "commondir"), []byte("../..\n"), 0o644))
	p := testPolicy(t, workspaceWrite, func(ws string) {
		require.NoError(t, os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(gitdir, "gitdir"), []byte(filepath.Join(ws, ".git")+"\n"), 0o644))
	})
	ws := p.WorkspaceRoot
	// What Resolve makes of it: the gitdir and the common dir are
	// writable roots of their own, and the .git file is protected with
	// git's paths in both. ws/.git/hooks is not among them (hooks live
	// in the gitdir), but is listed to show what the .git file does.
	p.WritableRoots = []string{ws, gitdir, common, p.TmpDir}
	p.Protected = append(protectedBeneath(ws, gitdir, common), filepath.Join(ws, ".gitmodules"), filepath.Join(ws, ".git"))
	p.Protected = append(p.Protected, gitPaths(gitdir)...)
	p.Protected = append(p.Protected, gitPaths(common)...)
	p.Protected = append(p.Protected, filepath.Join(gitdir, "gitdir"), filepath.Join(ws, ".git", "hooks"))
	plan, err := makePlan(p.Policy)
	require.NoError(t, err)
	d := denyFor(t, plan, filepath.Join(ws, ".git"), grantSID(ws), false)
	assert.Equal(t, uint32(denyWriteMask), d.Mask)
	assert.NotContains(t, plan.Missing, filepath.Join(ws, ".git", "hooks"), "the .git file keeps hooks from being made")
	assert.Contains(t, plan.TokenSIDs, grantSID(gitdir), "the gitdir is a writable root of its own")
}

func TestPlanRefusesLinkedProtectedPaths(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need a privilege on Windows")
	}
	elsewhere := t.TempDir()
	p := testPolicy(t, workspaceWrite, func(ws string) {
		require.NoError(t, os.Symlink(elsewhere, filepath.Join(ws, ".vscode")))
	})
	_, err := makePlan(p.Policy)
	assert.ErrorIs(t, err, ErrProtectedLink)
	assert.ErrorContains(t, err, ".vscode")
}

func TestPlanNestedRootsDenyForEachRoot(t *testing.T) {
	ws, tmp := realTempDir(t), realTempDir(t)
	inner := testMkdir(t, ws, "sub")
	testMkdir(t, inner, ".vscode")
	p := resolved{Policy: Policy{WritableRoots: []string{ws, inner, tmp}, Protected: protectedBeneath(ws, inner), TmpDir: tmp}, WorkspaceRoot: ws}
	plan, err := makePlan(p.Policy)
	require.NoError(t, err)
	target := filepath.Join(p.WorkspaceRoot, "sub", ".vscode")
	// Both SIDs reach sub/.vscode (the outer grant inherits into it); a
	// deny for each keeps it read-only whichever the token carries.
	denyFor(t, plan, target, grantSID(p.WorkspaceRoot), true)
	denyFor(t, plan, target, grantSID(filepath.Join(p.WorkspaceRoot, "sub")), true)
}

func TestPlanProtectsARootThatIsProtected(t *testing.T) {
	// cordon's state directory used as the workspace: it is protected.
	p := testPolicy(t, workspaceWrite, nil)
	p.Protected = append(p.Protected, p.WorkspaceRoot)
	plan, err := makePlan(p.Policy)
	require.NoError(t, err)
	d := denyFor(t, plan, p.WorkspaceRoot, grantSID(p.WorkspaceRoot), true)
	assert.Equal(t, uint32(denyWriteMask), d.Mask)
}
