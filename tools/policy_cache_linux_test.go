//go:build linux

package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cordonhq/cordon/sandbox"
)

// TestPolicyCacheIsUsed: on Linux a second call with nothing changed is
// served from the cache, and one fence serves both.
func TestPolicyCacheIsUsed(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "f"), nil, 0o644))
	svc := &sandbox.PolicyService{Settings: sandbox.Settings{Mode: sandbox.WorkspaceWrite, Workspace: ws, Home: t.TempDir()}}
	var c policyCache
	req := sandbox.Request{SessionID: "s"}
	first, err := c.resolve(svc, req)
	require.NoError(t, err)
	require.Len(t, c.policies, 1)
	cached := c.policies[keyOf(req, sandbox.WorkspaceWrite)]
	require.True(t, cached.watch.Current(), "the policy is watched")
	require.NotEmpty(t, first.Inputs.Paths)

	second, err := c.resolve(svc, req)
	require.NoError(t, err)
	require.Equal(t, first, second)
	require.Same(t, cached.watch, c.policies[keyOf(req, sandbox.WorkspaceWrite)].watch, "served from the cache")

	f1, err := c.fence(fenceConfig(first))
	require.NoError(t, err)
	f2, err := c.fence(fenceConfig(second))
	require.NoError(t, err)
	require.Same(t, f1, f2)
}
