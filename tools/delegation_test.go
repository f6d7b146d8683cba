package tools_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parent is a delegated session's parent as a test sets it.
type parent struct {
	mode  atomic.Value // sandbox.Mode
	reads atomic.Int32
	err   error
}

func (p *parent) Mode() (sandbox.Mode, error) {
	p.reads.Add(1)
	if p.err != nil {
		return "", p.err
	}
	return p.mode.Load().(sandbox.Mode), nil
}

// TestDelegatedSessionFollowsItsParent: a sub-agent's session is never
// wider than its parent's mode at the call (read again at every call, not
// copied once), and a parent that cannot be read holds it to read-only.
func TestDelegatedSessionFollowsItsParent(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	p := &parent{}
	p.mode.Store(sandbox.WorkspaceWrite)
	call := tools.Call{Session: &tools.Session{ID: "sub", Parent: p}}
	write := func(name string) *tools.ToolError {
		_, terr := w.tb.WriteFile(bg, call, tools.WriteFileInput{Path: filepath.Join(w.ws, name), Content: "x"})
		return terr
	}
	require.Nil(t, write("a.txt"), "the parent is workspace-write")

	p.mode.Store(sandbox.ReadOnly)
	before := p.reads.Load()
	terr := write("b.txt")
	require.NotNil(t, terr, "the parent narrowed: so does the sub-agent, at its next call")
	assert.True(t, terr.Denied, terr.Message)
	assert.Greater(t, p.reads.Load(), before, "the parent's mode is read at the call")
	_, err := os.Lstat(filepath.Join(w.ws, "b.txt"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	p.mode.Store(sandbox.DangerFullAccess)
	require.Nil(t, write("c.txt"), "never wider than its own mode either: workspace-write")
	assert.Equal(t, sandbox.WorkspaceWrite, call.Session.ModeOr(sandbox.WorkspaceWrite))

	p.err = errors.New("the parent's log is broken")
	assert.NotNil(t, write("d.txt"), "a parent that cannot be read holds it to read-only")
	assert.Equal(t, sandbox.ReadOnly, call.Session.ModeOr(sandbox.WorkspaceWrite))
	_, err = os.Lstat(filepath.Join(w.ws, "d.txt"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
