package tools_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/tools"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
)

// filesWorld is a user's machine in miniature for the file tools: a workspace,
// a directory outside it, a home with a credential canary under ~/.ssh,
// and cordon's state and config directories; all under /var/tmp.
type filesWorld struct {
	base, ws, outside, home, state, config string
	canary                                 string
	tb                                     *tools.Toolbox
	call                                   tools.Call
}

const fileCanary = "SECRET-CANARY-7f3a"

func newFilesWorld(t testing.TB, mode sandbox.Mode) *filesWorld {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "cordon-files-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	w := &filesWorld{
		base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"),
		home: filepath.Join(base, "home"),
	}
	w.state = filepath.Join(w.home, ".local", "state", "cordon")
	w.config = filepath.Join(w.home, ".config", "cordon")
	w.canary = filepath.Join(w.home, ".ssh", "id_canary")
	for _, d := range []string{w.ws, w.outside, filepath.Join(w.home, ".ssh"), w.state, w.config} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(w.canary, []byte(fileCanary+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.state, "http-token"), []byte(fileCanary+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.outside, "file.txt"), []byte("outside\n"), 0o644))
	w.tb = tools.New(tools.Config{
		Settings: sandbox.Settings{Mode: mode, Workspace: w.ws, Home: w.home, StateDir: w.state, ConfigDir: w.config},
		Executor: &sandbox.Executor{Backends: &sandbox.Backends{}, Requirement: sandbox.Required},
		Gate:     approval.Gate{Policy: approval.OnRequest},
		Logger:   zerolog.Nop(),
	})
	s := &tools.Session{ID: "t"}
	// Claude Code's budget holds a default page of the files these tests
	// read; TestReadFilePageFitsClientBudget tests a smaller one.
	s.SetClient(tools.HabitsFor("claude-code"))
	w.call = tools.Call{Session: s}
	return w
}

// file writes a file under the workspace, creating its parents.
func (w *filesWorld) file(t testing.TB, rel, content string) string {
	t.Helper()
	p := filepath.Join(w.ws, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

var bg = context.Background()

// snapshotTree records every path under dir with its type, mode and content,
// so that a test can prove a refused call changed nothing at all.
func snapshotTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := d.Info()
		require.NoError(t, err)
		v := info.Mode().String()
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			v += " " + string(b)
		}
		out[p] = v
		return nil
	}))
	return out
}

// requireFileDenied checks the standard denial: code, flag, marker first.
func requireFileDenied(t testing.TB, terr *tools.ToolError, mode sandbox.Mode) {
	t.Helper()
	require.NotNil(t, terr, "the call must be refused")
	require.Equal(t, tools.CodeDenied, terr.Code, terr.Message)
	require.True(t, terr.Denied)
	require.True(t, strings.HasPrefix(terr.Message, tools.DenialMarker(mode)+"\n"), terr.Message)
	require.NotContains(t, terr.Message, fileCanary)
	res := terr.AsResult()
	require.True(t, res.IsError)
	require.Equal(t, true, res.Structured["denied"])
}

func requireFileCode(t testing.TB, terr *tools.ToolError, code string) {
	t.Helper()
	require.NotNil(t, terr, "expected %s", code)
	require.Equal(t, code, terr.Code, terr.Message)
	require.False(t, terr.Denied, terr.Message)
}

// TestSessionTmpRemovedByACommand: a command may remove the session's tmp.
// The file tools go on reading (before and after the cached policy is
// derived), and the next call that may write makes the tmp again.
func TestSessionTmpRemovedByACommand(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	tmp, err := sandbox.NewSessionTmp(w.state)
	require.NoError(t, err)
	t.Cleanup(func() { tmp.Remove() })
	w.call.Session.Tmp = tmp
	w.file(t, "a.txt", "hello\n")
	read := func() {
		t.Helper()
		res, terr := w.tb.ReadFile(bg, w.call, tools.ReadFileInput{Path: "a.txt"})
		require.Nil(t, terr)
		require.Contains(t, res.Text, "hello")
	}
	read() // the policy is derived with the tmp there
	require.NoError(t, os.RemoveAll(tmp.Path))
	read()
	require.NoError(t, os.RemoveAll(tmp.Path))

	_, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "b.txt", Content: "new\n"})
	require.Nil(t, terr)
	require.DirExists(t, tmp.Path)
	require.NoError(t, os.RemoveAll(tmp.Path))
	read()
}
