package tools

import (
	"testing"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEscalationLadder(t *testing.T) {
	refused := []struct{ current, target sandbox.Mode }{
		{sandbox.WorkspaceWrite, sandbox.WorkspaceWrite},
		{sandbox.DangerFullAccess, sandbox.WorkspaceWrite},
		{sandbox.WorkspaceWrite, sandbox.ReadOnly},
		{sandbox.ReadOnly, "root"},
	}
	for _, r := range refused {
		assert.ErrorIs(t, canEscalateTo(r.current, r.target), errEscalationInvalid, "%+v", r)
	}
	assert.NoError(t, canEscalateTo(sandbox.ReadOnly, sandbox.DangerFullAccess), "read-only may jump straight to danger")
	assert.NoError(t, canEscalateTo(sandbox.ReadOnly, sandbox.WorkspaceWrite))
	assert.NoError(t, canEscalateTo(sandbox.WorkspaceWrite, sandbox.DangerFullAccess))
}

func TestParseEscalation(t *testing.T) {
	m, j, err := parseEscalation("", "")
	require.NoError(t, err)
	assert.Empty(t, m)
	assert.Empty(t, j)
	for _, c := range [][2]string{{"workspace-write", ""}, {"", "because"}, {"workspace-write", "   "}, {"everything", "because"}} {
		_, _, err := parseEscalation(c[0], c[1])
		assert.ErrorIs(t, err, errEscalationInvalid, "%q", c)
	}
	m, j, err = parseEscalation("workspace-write", " run the build ")
	require.NoError(t, err)
	assert.Equal(t, sandbox.WorkspaceWrite, m)
	assert.Equal(t, "run the build", j)
}
