package sandbox

import (
	"path/filepath"
	"testing"

	"github.com/cordonhq/cordon/internal/winacl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestControlPlaneOutside: a backend that cannot keep a path read-only
// beneath a writable parent refuses a root that holds cordon's config or
// state directory, and names the fix.
func TestControlPlaneOutside(t *testing.T) {
	home := t.TempDir()
	p := ExecutionPolicy{Mode: WorkspaceWrite, WritableRoots: []string{home},
		ConfigDir: filepath.Join(home, ".config", "cordon"), StateDir: "/elsewhere/state"}
	err := controlPlaneOutside(p, "windows-acl")
	var ue *UnavailableError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, ue.Reason, "cordon's config directory")
	assert.Contains(t, ue.Reason, "install bubblewrap")
	cp, err := p.ToConfined()
	require.NoError(t, err)
	_, _, err = windowsACLConfine("cordon.exe", []string{"cmd"}, cp, winacl.Decision{Token: winacl.TokenRestricted})
	assert.ErrorAs(t, err, &ue)

	p.ConfigDir, p.StateDir = "/elsewhere/config", filepath.Join(home, "state")
	assert.ErrorContains(t, controlPlaneOutside(p, "Landlock"), "state directory")
	p.StateDir = "/elsewhere/state"
	assert.NoError(t, controlPlaneOutside(p, "Landlock"))
	// The session tmp lives inside the state directory: a root inside it
	// is no threat to it.
	p.StateDir, p.WritableRoots, p.TmpDir = home, []string{filepath.Join(home, "tmp", "x")}, filepath.Join(home, "tmp", "x")
	assert.NoError(t, controlPlaneOutside(p, "Landlock"))
}
