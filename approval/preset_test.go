package approval

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordonhq/cordon/sandbox"
)

func TestParsePreset(t *testing.T) {
	tests := []struct {
		name     string
		mode     sandbox.Mode
		approval Policy
	}{
		{"safe", sandbox.ReadOnly, AskDangerous},
		{"review", sandbox.WorkspaceWrite, AskDangerous},
		{"danger", sandbox.DangerFullAccess, Never},
	}
	for _, tt := range tests {
		p, err := ParsePreset(tt.name)
		require.NoError(t, err)
		assert.Equal(t, tt.mode, p.Mode())
		assert.Equal(t, tt.approval, p.Approval())
	}

	_, err := ParsePreset("custom")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "set mode and approval instead")

	_, err = ParsePreset("yolo")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "use one of safe, review, danger")

	assert.Equal(t, sandbox.Mode(""), Custom.Mode())
	assert.Equal(t, Policy(""), Custom.Approval())
}

func TestDerive(t *testing.T) {
	tests := []struct {
		name string
		in   Settings
		want DerivedState
	}{
		{"nothing set is review", Settings{},
			DerivedState{sandbox.WorkspaceWrite, AskDangerous, Review}},
		{"safe", Settings{Preset: Safe},
			DerivedState{sandbox.ReadOnly, AskDangerous, Safe}},
		{"review", Settings{Preset: Review},
			DerivedState{sandbox.WorkspaceWrite, AskDangerous, Review}},
		{"danger", Settings{Preset: Danger},
			DerivedState{sandbox.DangerFullAccess, Never, Danger}},
		{"review with its own mode stays review", Settings{Preset: Review, Mode: sandbox.WorkspaceWrite},
			DerivedState{sandbox.WorkspaceWrite, AskDangerous, Review}},
		{"danger with its own values stays danger", Settings{Preset: Danger, Mode: sandbox.DangerFullAccess, Approval: Never},
			DerivedState{sandbox.DangerFullAccess, Never, Danger}},
		{"review with another mode is custom", Settings{Preset: Review, Mode: sandbox.ReadOnly},
			DerivedState{sandbox.ReadOnly, AskDangerous, Custom}},
		{"review with another approval is custom", Settings{Preset: Review, Approval: Always},
			DerivedState{sandbox.WorkspaceWrite, Always, Custom}},
		{"safe with another mode is custom", Settings{Preset: Safe, Mode: sandbox.DangerFullAccess},
			DerivedState{sandbox.DangerFullAccess, AskDangerous, Custom}},
		{"danger with another approval is custom", Settings{Preset: Danger, Approval: AskDangerous},
			DerivedState{sandbox.DangerFullAccess, AskDangerous, Custom}},
		{"no preset, values of review", Settings{Mode: sandbox.WorkspaceWrite, Approval: AskDangerous},
			DerivedState{sandbox.WorkspaceWrite, AskDangerous, Review}},
		{"no preset, values of safe", Settings{Mode: sandbox.ReadOnly, Approval: AskDangerous},
			DerivedState{sandbox.ReadOnly, AskDangerous, Safe}},
		{"no preset, mode of safe, approval from the default", Settings{Mode: sandbox.ReadOnly},
			DerivedState{sandbox.ReadOnly, AskDangerous, Safe}},
		{"no preset, values of danger", Settings{Mode: sandbox.DangerFullAccess, Approval: Never},
			DerivedState{sandbox.DangerFullAccess, Never, Danger}},
		{"no preset, only danger's mode", Settings{Mode: sandbox.DangerFullAccess},
			DerivedState{sandbox.DangerFullAccess, AskDangerous, Custom}},
		{"no preset, only an approval", Settings{Approval: OnRequest},
			DerivedState{sandbox.WorkspaceWrite, OnRequest, Custom}},
		{"no preset, read-only and never", Settings{Mode: sandbox.ReadOnly, Approval: Never},
			DerivedState{sandbox.ReadOnly, Never, Custom}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Derive(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDeriveErrors(t *testing.T) {
	tests := []struct {
		in   Settings
		want string
	}{
		{Settings{Preset: "custom"}, "cannot be chosen"},
		{Settings{Preset: "fast"}, "unknown preset"},
		{Settings{Mode: "write-everything"}, "unknown mode"},
		{Settings{Approval: "sometimes"}, "unknown approval policy"},
	}
	for _, tt := range tests {
		_, err := Derive(tt.in)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tt.want)
	}
}
