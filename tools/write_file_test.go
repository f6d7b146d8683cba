package tools_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/fsfence"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
	"github.com/cordonhq/cordon/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFile(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)

	res, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "a/b/c.txt", Content: "hello\n"})
	require.Nil(t, terr)
	p := filepath.Join(w.ws, "a", "b", "c.txt")
	assert.Equal(t, map[string]any{"path": p, "bytes_written": 6, "created": true}, res.Structured)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(got))

	res, terr = w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: p, Content: ""})
	require.Nil(t, terr)
	assert.Equal(t, map[string]any{"path": p, "bytes_written": 0, "created": false}, res.Structured)
	got, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Empty(t, got)

	script := w.file(t, "run.sh", "#!/bin/sh\n")
	require.NoError(t, os.Chmod(script, 0o755))
	_, terr = w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "run.sh", Content: "#!/bin/sh\necho hi\n"})
	require.Nil(t, terr)
	fi, err := os.Stat(script)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), "the mode of an existing file is kept")

	require.NoError(t, os.Mkdir(filepath.Join(w.ws, "dir"), 0o755))
	_, terr = w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "dir", Content: "x"})
	requireFileCode(t, terr, tools.CodeInvalidArgument)

	for _, in := range []tools.WriteFileInput{{Path: "", Content: "x"}, {Path: "a\x00b", Content: "x"}} {
		_, terr = w.tb.WriteFile(bg, w.call, in)
		requireFileCode(t, terr, tools.CodeInvalidArgument)
	}
}

// TestWriteFileAppend: with append, content goes at the end of the file;
// a missing file is created, parents included.
func TestWriteFileAppend(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	p := w.file(t, "log.txt", "one\n")
	require.NoError(t, os.Chmod(p, 0o640))

	res, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "log.txt", Content: "two\n", Append: true})
	require.Nil(t, terr)
	assert.Equal(t, map[string]any{"path": p, "bytes_written": 4, "created": false}, res.Structured, "bytes_written counts the bytes added")
	assert.Equal(t, "Appended 4 bytes to "+p, res.Text)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\n", string(got))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the mode is kept")

	// No newline is added: the text goes on where the file ends.
	w.file(t, "partial.txt", "abc")
	_, terr = w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "partial.txt", Content: "def", Append: true})
	require.Nil(t, terr)
	got, err = os.ReadFile(filepath.Join(w.ws, "partial.txt"))
	require.NoError(t, err)
	assert.Equal(t, "abcdef", string(got))

	_, terr = w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "log.txt", Content: "", Append: true})
	require.Nil(t, terr)
	got, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\n", string(got), "appending nothing changes nothing")

	res, terr = w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "new/dir/n.txt", Content: "first\n", Append: true})
	require.Nil(t, terr)
	n := filepath.Join(w.ws, "new", "dir", "n.txt")
	assert.Equal(t, map[string]any{"path": n, "bytes_written": 6, "created": true}, res.Structured)
	assert.Equal(t, "Created "+n+" (6 bytes)", res.Text)
	got, err = os.ReadFile(n)
	require.NoError(t, err)
	assert.Equal(t, "first\n", string(got))

	// Through the table: append is an argument, a boolean.
	res, terr = toolNamed(t, "write_file").Run(bg, w.tb, w.call, map[string]any{"path": "log.txt", "content": "three\n", "append": true})
	require.Nil(t, terr)
	assert.Equal(t, false, res.Structured["created"])
	got, err = os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\nthree\n", string(got))
	assert.Equal(t, "boolean", toolNamed(t, "write_file").InputSchema().Properties["append"].Type)
	assert.False(t, toolNamed(t, "write_file").Idempotent, "the same append, called twice, adds twice")
	_, terr = toolNamed(t, "write_file").Run(bg, w.tb, w.call, map[string]any{"path": "log.txt", "content": "x", "append": "yes"})
	requireFileCode(t, terr, tools.CodeInvalidArgument)
	assert.Equal(t, `write_file: argument "append" must be a boolean, not string`, terr.Message)

	require.NoError(t, os.Mkdir(filepath.Join(w.ws, "dir"), 0o755))
	_, terr = w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "dir", Content: "x", Append: true})
	requireFileCode(t, terr, tools.CodeInvalidArgument)

	// Too large to rewrite in memory: refused, pointing at bash, unchanged.
	big := filepath.Join(w.ws, "big.log")
	require.NoError(t, os.WriteFile(big, []byte("x\n"), 0o644))
	require.NoError(t, os.Truncate(big, fsfence.MaxEditSize+1))
	_, terr = w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: big, Content: "more\n", Append: true})
	requireFileCode(t, terr, tools.CodeTooLarge)
	assert.Contains(t, terr.Message, "cat >>")
	fi, err = os.Stat(big)
	require.NoError(t, err)
	assert.EqualValues(t, fsfence.MaxEditSize+1, fi.Size())
}

// TestWriteFileAppendDenied: an append is a write: the fence refuses it
// wherever it refuses write_file, and the file keeps its content.
func TestWriteFileAppendDenied(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	cases := deniedWrites(t, w)
	cases["new git hook"] = ".git/hooks/pre-commit"
	cases["new file outside"] = filepath.Join(w.outside, "new.txt")
	before := snapshotTree(t, w.base)
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			res, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: p, Content: "pwned\n", Append: true})
			require.Nil(t, res)
			requireFileDenied(t, terr, sandbox.WorkspaceWrite)
			assert.Contains(t, terr.Message, "write_file refused ")
		})
	}
	assert.Equal(t, before, snapshotTree(t, w.base), "a refused append changes nothing")

	ro := newFilesWorld(t, sandbox.ReadOnly)
	p := ro.file(t, "a.txt", "a\n")
	_, terr := ro.tb.WriteFile(bg, ro.call, tools.WriteFileInput{Path: p, Content: "b\n", Append: true})
	requireFileDenied(t, terr, sandbox.ReadOnly)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "a\n", string(got))
}

// deniedWrites sets up the traps of a workspace and returns the paths that
// write_file and edit_file must refuse, each naming an existing file so
// that edit_file meets the fence, not a missing file.
func deniedWrites(t *testing.T, w *filesWorld) map[string]string {
	t.Helper()
	w.file(t, ".git/config", "[core]\n")
	w.file(t, ".git/hooks/pre-commit.sample", "#!/bin/sh\n")
	w.file(t, ".cordon/config.toml", "mode = \"read-only\"\n")
	w.file(t, ".bashrc", "alias ls=ls\n")
	w.file(t, ".vscode/tasks.json", "{}\n")
	require.NoError(t, os.WriteFile(filepath.Join(w.config, "config.toml"), []byte("mode = \"danger-full-access\"\n"), 0o644))
	require.NoError(t, os.Symlink(w.outside, filepath.Join(w.ws, "out")))
	require.NoError(t, os.Symlink(filepath.Join(w.outside, "file.txt"), filepath.Join(w.ws, "outfile")))
	require.NoError(t, os.Symlink(filepath.Join(w.home, ".ssh"), filepath.Join(w.ws, "keys")))
	require.NoError(t, os.Symlink(filepath.Join(w.ws, ".git"), filepath.Join(w.ws, "g")))
	return map[string]string{
		"dot-dot escape":               "../outside/file.txt",
		"absolute outside":             filepath.Join(w.outside, "file.txt"),
		"symlinked dir outside":        "out/file.txt",
		"symlinked file outside":       "outfile",
		"symlink to the read-deny dir": "keys/id_canary",
		"read-deny canary":             w.canary,
		"git hook":                     ".git/hooks/pre-commit.sample",
		"git config":                   ".git/config",
		"git config through a symlink": "g/config",
		"cordon dir":                   ".cordon/config.toml",
		"bashrc":                       ".bashrc",
		"vscode":                       ".vscode/tasks.json",
		"state dir":                    filepath.Join(w.state, "http-token"),
		"config dir":                   filepath.Join(w.config, "config.toml"),
	}
}

func TestWriteFileDenied(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	cases := deniedWrites(t, w)
	// Creating a protected path that does not exist yet is a write too.
	cases["new git hook"] = ".git/hooks/pre-commit"
	cases["new bash_profile"] = ".bash_profile"
	cases["new file in the cordon dir"] = ".cordon/x"
	cases["new file outside"] = filepath.Join(w.outside, "new.txt")
	cases["new file in the state dir"] = filepath.Join(w.state, "new.jsonl")
	cases["new dir through an escape"] = "../outside/sub/new.txt"
	before := snapshotTree(t, w.base)
	for name, p := range cases {
		t.Run(name, func(t *testing.T) {
			res, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: p, Content: "pwned\n"})
			require.Nil(t, res)
			requireFileDenied(t, terr, sandbox.WorkspaceWrite)
			assert.Contains(t, terr.Message, "write_file refused ")
			assert.Contains(t, terr.Message, `call write_file again with sandbox_permissions="danger-full-access"`)
		})
	}
	assert.Equal(t, before, snapshotTree(t, w.base), "a refused write changes nothing")
}

func TestWriteFileReadOnly(t *testing.T) {
	w := newFilesWorld(t, sandbox.ReadOnly)
	before := snapshotTree(t, w.base)
	_, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "new.txt", Content: "x"})
	requireFileDenied(t, terr, sandbox.ReadOnly)
	assert.True(t, strings.HasPrefix(terr.Message, "[sandbox: file access denied under read-only mode]\n"), terr.Message)
	assert.Contains(t, terr.Message, `[sandbox: to retry with wider access, call write_file again with sandbox_permissions="workspace-write" and a one-sentence justification]`)
	assert.Equal(t, before, snapshotTree(t, w.base))

	// Escalation without anyone to ask fails closed.
	_, terr = w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "new.txt", Content: "x",
		Escalation: tools.Escalation{SandboxPermissions: "workspace-write", Justification: "the user asked for the file"}})
	require.NotNil(t, terr)
	assert.Equal(t, tools.CodeNoApprover, terr.Code)
	assert.Equal(t, before, snapshotTree(t, w.base))

	// An approved escalation writes, for this one call.
	call := w.call
	call.Asker = askerFunc(func(context.Context, tools.Question) (approval.Answer, error) { return approval.AllowOnce, nil })
	res, terr := w.tb.WriteFile(bg, call, tools.WriteFileInput{Path: "new.txt", Content: "x",
		Escalation: tools.Escalation{SandboxPermissions: "workspace-write", Justification: "the user asked for the file"}})
	require.Nil(t, terr)
	assert.Equal(t, true, res.Structured["created"])
	_, terr = w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "new2.txt", Content: "x"})
	requireFileDenied(t, terr, sandbox.ReadOnly)
}

type askerFunc func(context.Context, tools.Question) (approval.Answer, error)

func (f askerFunc) Ask(ctx context.Context, q tools.Question) (approval.Answer, error) {
	return f(ctx, q)
}

// TestWriteFileDanger: danger-full-access writes anywhere through the same
// fence (its writable root is "/").
func TestWriteFileDanger(t *testing.T) {
	w := newFilesWorld(t, sandbox.DangerFullAccess)
	p := filepath.Join(w.outside, "sub", "new.txt")
	res, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: p, Content: "ok\n"})
	require.Nil(t, terr)
	assert.Equal(t, true, res.Structured["created"])
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "ok\n", string(got))
}

// TestFileToolsLogged: write_file and edit_file leave a tool/call and a
// tool/result line in the session log, refusals included; reads leave none.
func TestFileToolsLogged(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	dir := filepath.Join(w.base, "sessions")
	log, err := sessionlog.Create(dir, "logged", sessionlog.StartInfo{Workspace: w.ws})
	require.NoError(t, err)
	t.Cleanup(func() { log.Close() })
	s := &tools.Session{ID: "logged", Log: log}
	call := tools.Call{Session: s}

	_, terr := w.tb.WriteFile(bg, call, tools.WriteFileInput{Path: "a.txt", Content: "one\n"})
	require.Nil(t, terr)
	_, terr = w.tb.EditFile(bg, call, tools.EditFileInput{Path: "a.txt", OldString: "two", NewString: "three"})
	requireFileCode(t, terr, tools.CodeInvalidArgument)
	_, terr = w.tb.WriteFile(bg, call, tools.WriteFileInput{Path: ".git/hooks/post-checkout", Content: "x"})
	requireFileDenied(t, terr, sandbox.WorkspaceWrite)
	_, terr = w.tb.ReadFile(bg, call, tools.ReadFileInput{Path: "a.txt"})
	require.Nil(t, terr)

	events, err := sessionlog.Read(dir, "logged")
	require.NoError(t, err)
	var got []string
	for _, e := range events[1:] {
		var data map[string]any
		require.NoError(t, e.Decode(&data))
		line := e.Type + " " + data["tool"].(string)
		if code, ok := data["error"]; ok {
			line += " error=" + code.(string)
		}
		if created, ok := data["created"]; ok {
			line += fmt.Sprintf(" created=%v", created)
		}
		got = append(got, line)
	}
	assert.Equal(t, []string{
		"tool/call write_file", "tool/result write_file created=true",
		"tool/call edit_file", "tool/result edit_file error=INVALID_ARGUMENT",
		"tool/call write_file", "tool/result write_file error=SANDBOX_DENIED",
	}, got)
}

// TestWriteFileNotAskedWhenRefused: under approval "always", a write that
// the fence refuses anyway fails without asking the human; an allowed one
// asks once.
func TestWriteFileNotAskedWhenRefused(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	cfg := w.tb.Config()
	cfg.Gate = approval.Gate{Policy: approval.Always}
	tb := tools.New(cfg)
	s := &tools.Session{ID: "always"}
	var asked []string
	call := tools.Call{Session: s, Asker: askerFunc(func(_ context.Context, q tools.Question) (approval.Answer, error) {
		asked = append(asked, q.Tool+" "+q.Subject)
		return approval.AllowOnce, nil
	})}
	_, terr := tb.WriteFile(bg, call, tools.WriteFileInput{Path: ".git/hooks/pre-push", Content: "x"})
	requireFileDenied(t, terr, sandbox.WorkspaceWrite)
	_, terr = tb.EditFile(bg, call, tools.EditFileInput{Path: filepath.Join(w.outside, "file.txt"), OldString: "outside", NewString: "x"})
	requireFileDenied(t, terr, sandbox.WorkspaceWrite)
	assert.Empty(t, asked)

	_, terr = tb.WriteFile(bg, call, tools.WriteFileInput{Path: "ok.txt", Content: "x"})
	require.Nil(t, terr)
	assert.Equal(t, []string{"write_file " + filepath.Join(w.ws, "ok.txt")}, asked)
}

// TestWriteFileNotInAGitDirByAnyName: the file tools write in no gitdir
// the policy knows, though its name is not .git: one a .git file points
// to (git init --separate-git-dir) holds hooks and an unfinished rebase's
// todo, whose exec lines the human's git rebase --continue would run.
func TestWriteFileNotInAGitDirByAnyName(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	repo, gitdir := filepath.Join(w.ws, "repo"), filepath.Join(w.ws, "gitdirs", "repo")
	require.NoError(t, os.MkdirAll(filepath.Dir(gitdir), 0o755))
	out, err := exec.Command("git", "init", "-q", "--separate-git-dir="+gitdir, repo).CombinedOutput()
	require.NoError(t, err, "%s", out)
	before := snapshotTree(t, w.base)
	for _, p := range []string{"gitdirs/repo/rebase-merge/git-rebase-todo", "gitdirs/repo/hooks/pre-commit", "gitdirs/repo/config"} {
		t.Run(p, func(t *testing.T) {
			res, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: p, Content: "exec sh -c pwned\n"})
			require.Nil(t, res)
			requireFileDenied(t, terr, sandbox.WorkspaceWrite)
		})
	}
	assert.Equal(t, before, snapshotTree(t, w.base), "a refused write changes nothing")
	_, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "repo/main.go", Content: "package main\n"})
	require.Nil(t, terr, "the work tree is written as ever")
}

// TestWriteFileAssemblesNoGitDir: write_file cannot make a directory that
// git would take for a repository (HEAD, objects, refs, and a config whose
// core.fsmonitor the human's prompt runs), which no audit would see made.
func TestWriteFileAssemblesNoGitDir(t *testing.T) {
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	for _, f := range []string{"src/objects/x", "src/refs/x", "src/config"} {
		_, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: f, Content: "[core]\n\tfsmonitor = touch /tmp/pwned\n"})
		require.Nil(t, terr, f)
	}
	before := snapshotTree(t, w.base)
	_, terr := w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "src/HEAD", Content: "ref: refs/heads/main\n"})
	requireFileDenied(t, terr, sandbox.WorkspaceWrite)
	assert.Contains(t, terr.Message, "HEAD")
	_, terr = w.tb.EditFile(bg, w.call, tools.EditFileInput{Path: "src/HEAD", OldString: "", NewString: "ref: refs/heads/main\n"})
	require.NotNil(t, terr)
	assert.Equal(t, before, snapshotTree(t, w.base), "a refused write changes nothing")
	out, _ := exec.Command("git", "-C", filepath.Join(w.ws, "src"), "rev-parse", "--git-dir").CombinedOutput()
	assert.NotEqual(t, filepath.Join(w.ws, "src"), strings.TrimSpace(string(out)), "git does not take src for a repository")
	// Other names are written as ever, a directory or file "head" too.
	_, terr = w.tb.WriteFile(bg, w.call, tools.WriteFileInput{Path: "src/components/Head/head.tsx", Content: "x\n"})
	require.Nil(t, terr)
}
