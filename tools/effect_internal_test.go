package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEffectPins: every change a concurrent writer can make to what a
// question showed is named, and nothing else is.
func TestEffectPins(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "a workspace")
	outside := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	task := filepath.Join(ws, "task.sh")
	require.NoError(t, os.WriteFile(task, []byte("echo one\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "x.sh"), []byte("echo x\n"), 0o644))
	pol := sandbox.ExecutionPolicy{WorkspaceRoot: ws, WritableRoots: []string{ws}}
	take := func(cwd, command string) Effect {
		e, terr := bashEffect(pol, cwd, command, "/usr/bin:/bin")
		require.Nil(t, terr)
		return e
	}
	asked := take("", "bash task.sh && ./later.sh")
	assert.Equal(t, ws, asked.Dir)
	assert.Equal(t, []Lead{{Path: task}, {Path: filepath.Join(ws, "later.sh"), Absent: true}}, asked.Writable)
	assert.Empty(t, changes(asked.pins, take("", "bash task.sh && ./later.sh").pins), "nothing changed")

	require.NoError(t, os.WriteFile(task, []byte("echo two\n"), 0o644))
	assert.Equal(t, []string{"the content of " + task + " changed"}, changes(asked.pins, take("", "bash task.sh && ./later.sh").pins))

	asked = take("", "bash task.sh && ./later.sh")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "later.sh"), nil, 0o644))
	require.NoError(t, os.Rename(filepath.Join(ws, "later.sh"), task+".new"))
	require.NoError(t, os.Rename(task+".new", task))
	assert.Equal(t, []string{task + " was replaced by another file"}, changes(asked.pins, take("", "bash task.sh && ./later.sh").pins))

	asked = take("sub", "./x.sh")
	require.NoError(t, os.Remove(filepath.Join(ws, "sub")))
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "sub")))
	now := take("sub", "./x.sh")
	assert.Equal(t, outside, now.Dir)
	assert.Equal(t, []Lead{{Path: filepath.Join(ws, "sub", "x.sh"), Target: filepath.Join(outside, "x.sh")}}, now.Writable,
		"named beneath the workspace, so the agent can re-point it")
	assert.Equal(t, []string{
		"the working directory now leads to " + outside + " (the question showed " + filepath.Join(ws, "sub") + ")",
		filepath.Join(ws, "sub", "x.sh") + " now leads to " + filepath.Join(outside, "x.sh") + " (the question showed " + filepath.Join(ws, "sub", "x.sh") + ")",
	}, changes(asked.pins, now.pins))

	link := filepath.Join(ws, "todo.txt")
	require.NoError(t, os.Symlink(filepath.Join(outside, "x.sh"), link))
	e := pathEffect(link)
	assert.Equal(t, []Lead{{Path: link, Target: filepath.Join(outside, "x.sh")}}, e.Leads)
	decoded, err := decodePins(e.EncodePins())
	require.NoError(t, err)
	assert.Equal(t, e.pins, decoded, "the round trip carries the pins whole")
	assert.Equal(t, []Lead(nil), pathEffect(filepath.Join(ws, "new", "file")).Leads)
}

// TestEffectTooLongIsNotAsked: a command that names more workspace files
// than the dialog shows whole is refused before anyone is asked.
func TestEffectTooLongIsNotAsked(t *testing.T) {
	q := Question{Tool: "bash", Subject: "./x", Current: sandbox.WorkspaceWrite, Target: sandbox.DangerFullAccess, Justification: "j"}
	for i := 0; i < 64; i++ {
		q.Effect.Writable = append(q.Effect.Writable, Lead{Path: "/ws/" + strings.Repeat("d", 80) + "/x.sh"})
	}
	err := q.Displayable()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "one script")
	q.Effect.Writable = q.Effect.Writable[:3]
	assert.NoError(t, q.Displayable())
}

// TestEffectPathLookup: a bare program name that PATH finds in a directory
// the agent can write is shown and pinned like ./build.sh; one that PATH
// finds elsewhere is not shown, but a planted one appearing ahead of it
// later is a change.
func TestEffectPathLookup(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(ws, "bin"), 0o755))
	mk := filepath.Join(ws, "bin", "make")
	require.NoError(t, os.WriteFile(mk, []byte("#!/bin/sh\n"), 0o755))
	sys := t.TempDir() // a system directory the agent cannot write
	require.NoError(t, os.WriteFile(filepath.Join(sys, "ls"), []byte("#!/bin/sh\n"), 0o755))
	pol := sandbox.ExecutionPolicy{WorkspaceRoot: ws, WritableRoots: []string{ws}}
	path := "bin:" + sys
	e, terr := bashEffect(pol, "", "make && ls", path)
	require.Nil(t, terr)
	assert.Equal(t, []Lead{{Path: mk}}, e.Writable, "make is workspace content; ls is not")

	asked := e.pins
	require.NoError(t, os.WriteFile(filepath.Join(ws, "bin", "ls"), []byte("#!/bin/sh\n"), 0o755))
	now, _ := bashEffect(pol, "", "make && ls", path)
	assert.Equal(t, []string{"ls (found through PATH) now leads to " + filepath.Join(ws, "bin", "ls") + " (the question showed " + filepath.Join(sys, "ls") + ")"},
		changes(asked, now.pins))

	e, _ = bashEffect(pol, "", "make && ls", sys)
	assert.Empty(t, e.Writable, "no PATH entry the agent can write")
}
