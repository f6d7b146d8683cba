//go:build linux

package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var protocolVersions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

func TestToolsList(t *testing.T) {
	w := newWorld(t)
	for _, v := range protocolVersions {
		t.Run(v, func(t *testing.T) {
			cs := w.stdio(t, clientOpts{version: v})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := cs.ListTools(ctx, nil)
			require.NoError(t, err)
			byName := map[string]*mcp.Tool{}
			for _, tool := range res.Tools {
				byName[tool.Name] = tool
			}
			want := []string{"bash", "process_output", "process_input", "process_kill", "process_list", "read_file", "write_file", "edit_file", "list_directory", "glob", "grep", "sandbox_status"}
			for _, name := range want {
				tool := byName[name]
				require.NotNil(t, tool, "tool %s missing", name)
				assert.NotEmpty(t, tool.Description)
				assert.NotNil(t, tool.InputSchema, name)
				if name == "read_file" {
					assert.Nil(t, tool.OutputSchema, "read_file is text only, so that its lines reach the model verbatim")
				} else {
					assert.NotNil(t, tool.OutputSchema, name)
				}
				require.NotNil(t, tool.Annotations, name)
				assert.NotNil(t, tool.Annotations.DestructiveHint, name)
				assert.NotNil(t, tool.Annotations.OpenWorldHint, name)
			}
			assert.Len(t, res.Tools, len(want))
			for _, name := range []string{"read_file", "list_directory", "glob", "grep", "sandbox_status"} {
				assert.True(t, byName[name].Annotations.ReadOnlyHint, "%s is read-only", name)
				assert.False(t, *byName[name].Annotations.DestructiveHint, name)
			}
			for _, name := range []string{"bash", "write_file", "edit_file"} {
				assert.False(t, byName[name].Annotations.ReadOnlyHint, name)
				assert.True(t, *byName[name].Annotations.DestructiveHint, name)
			}
			first := []rune(cs.InitializeResult().Instructions)[:200]
			assert.Contains(t, string(first), "sandbox_permissions", "the first 200 characters stand alone (Codex cuts there)")
			assert.Contains(t, string(first), "justification")
			assert.Contains(t, string(first), "workspace-write")
		})
	}
}

func TestBashBasics(t *testing.T) {
	w := newWorld(t)
	cs := w.stdio(t, clientOpts{version: "2025-11-25"})
	res := call(t, cs, "bash", map[string]any{"command": "echo out; echo err >&2; printf '\\033[31mred\\033[0m\\r\\n'; exit 3"})
	assert.False(t, res.IsError, "a non-zero exit is a normal result")
	st := structured(t, res)
	assert.EqualValues(t, 3, st["exit_code"])
	assert.Equal(t, "out\nerr\nred\n", st["output"], "merged in order, ANSI stripped, CRLF folded")
	assert.Equal(t, "workspace-write", st["mode"])
	assert.Equal(t, "bwrap", st["backend"])
	assert.Equal(t, "full", st["enforcement"])
	assert.Equal(t, false, st["denied"])
	assert.Contains(t, text(res), "[exit code 3]")

	res = call(t, cs, "bash", map[string]any{"command": "pwd; touch made-here", "cwd": "."})
	assert.False(t, res.IsError, text(res))
	real, _ := filepath.EvalSymlinks(w.ws)
	assert.Equal(t, real+"\n", structured(t, res)["output"])
	assert.FileExists(t, filepath.Join(w.ws, "made-here"))

	res = call(t, cs, "bash", map[string]any{"command": "env"})
	out := structured(t, res)["output"].(string)
	for _, secret := range []string{"aws-secret-canary", "gh-token-canary", "openai-canary"} {
		assert.NotContains(t, out, secret, "secrets never reach a confined command")
	}
	assert.Contains(t, out, "PATH=")
}

func TestBashDenial(t *testing.T) {
	w := newWorld(t)
	for _, mode := range []string{"read-only", "workspace-write"} {
		t.Run(mode, func(t *testing.T) {
			cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", mode)
			target := w.outsideFile
			if mode == "read-only" {
				target = filepath.Join(w.ws, "new.txt")
			}
			res := call(t, cs, "bash", map[string]any{"command": fmt.Sprintf("echo evil >> %s", target)})
			assert.True(t, res.IsError)
			assert.True(t, strings.HasPrefix(text(res), "[sandbox: file access denied under "+mode+" mode]"), text(res))
			assert.Contains(t, text(res), `call bash again with sandbox_permissions=`)
			st := structured(t, res)
			assert.Equal(t, true, st["denied"])
			assert.Equal(t, "SANDBOX_DENIED", errorCode(t, res))
			assert.Equal(t, "outside\n", fileContent(t, w.outsideFile))
			assert.NoFileExists(t, filepath.Join(w.ws, "new.txt"))
		})
	}
	t.Run("credentials hidden", func(t *testing.T) {
		cs := w.stdio(t, clientOpts{version: "2025-11-25"})
		res := call(t, cs, "bash", map[string]any{"command": "cat " + w.secret})
		assert.NotContains(t, text(res), "SECRET-CANARY")
		res = call(t, cs, "bash", map[string]any{"command": "ls -a " + filepath.Dir(w.secret)})
		assert.Equal(t, ".\n..\n", structured(t, res)["output"], "the credential directory looks empty")
		require.NoError(t, os.MkdirAll(filepath.Join(w.home, ".aws"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(w.home, ".aws", "credentials"), []byte("aws-canary"), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(w.state, "http-token"), []byte("token-canary"), 0o600))
		res = call(t, cs, "bash", map[string]any{"command": "ls -A ~/.aws; cat ~/.aws/credentials " + filepath.Join(w.state, "http-token")})
		assert.NotContains(t, text(res), "aws-canary")
		assert.NotContains(t, text(res), "token-canary")
		assert.NotContains(t, structured(t, res)["output"], "credentials\n")
	})
}

func TestGitThroughBash(t *testing.T) {
	w := newWorld(t)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = w.ws
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	cs := w.stdio(t, clientOpts{version: "2025-11-25"})
	res := call(t, cs, "bash", map[string]any{"command": "echo hi > a.txt && git add -A && git -c user.name=agent -c user.email=a@e commit -qm 'by the agent' && git log --format=%s -1"})
	assert.False(t, res.IsError, text(res))
	assert.Equal(t, "by the agent\n", structured(t, res)["output"])
	res = call(t, cs, "bash", map[string]any{"command": "echo evil > .git/hooks/pre-commit"})
	assert.True(t, res.IsError)
	assert.NoFileExists(t, filepath.Join(w.ws, ".git", "hooks", "pre-commit"))
}

func TestBashTimeoutKillsTheGroup(t *testing.T) {
	w := newWorld(t)
	cs := w.stdio(t, clientOpts{version: "2025-11-25"})
	late := filepath.Join(w.ws, "late")
	res := call(t, cs, "bash", map[string]any{
		"command":    fmt.Sprintf("(sleep 2; touch %s) & echo started; sleep 30", late),
		"timeout_ms": 500,
	})
	assert.True(t, res.IsError)
	assert.Equal(t, "TIMEOUT", errorCode(t, res))
	st := structured(t, res)
	assert.Equal(t, true, st["timed_out"])
	assert.Contains(t, st["output"], "started")
	time.Sleep(3 * time.Second)
	assert.NoFileExists(t, late, "the background child must die with the command")

	// MCP cancellation does the same.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
		"command": fmt.Sprintf("(sleep 2; touch %s) & sleep 30", late)}})
	cancel()
	assert.Error(t, err)
	time.Sleep(3 * time.Second)
	assert.NoFileExists(t, late, "cancellation kills the command and its children")
	res = call(t, cs, "bash", map[string]any{"command": "echo still here"})
	assert.Equal(t, "still here\n", structured(t, res)["output"])
}

func TestBashOutputIsCapped(t *testing.T) {
	w := newWorld(t)
	cmd := w.stdio(t, clientOpts{version: "2025-11-25"})
	res := call(t, cmd, "bash", map[string]any{"command": "yes 'a line of output' | head -c 50000000; echo; echo THE-END"})
	st := structured(t, res)
	assert.Equal(t, true, st["truncated"])
	out := st["output"].(string)
	assert.Less(t, len(out), 31000)
	assert.Contains(t, out, "THE-END", "the tail is kept")
	assert.True(t, strings.HasPrefix(out, "a line of output\n"), "the head is kept")
	assert.Contains(t, out, "characters cut")
}

func TestBadInput(t *testing.T) {
	w := newWorld(t)
	cs := w.stdio(t, clientOpts{version: "2025-11-25"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	var rpcErr *jsonrpc.Error
	require.True(t, errors.As(err, &rpcErr), "unknown tool is a protocol error: %v", err)
	assert.Contains(t, rpcErr.Message, "no_such_tool")

	cases := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"wrong type", "bash", map[string]any{"command": 42}, `argument "command" must be a string`},
		{"missing required", "bash", map[string]any{}, `missing required argument "command"`},
		{"unknown argument", "bash", map[string]any{"command": "true", "sudo": true}, `unknown argument "sudo"`},
		{"NUL in command", "bash", map[string]any{"command": "echo a\x00b"}, "NUL byte"},
		{"10 MB command", "bash", map[string]any{"command": "echo " + strings.Repeat("x", 10<<20)}, "the limit is"},
		{"bad timeout", "bash", map[string]any{"command": "true", "timeout_ms": 999999999}, "timeout_ms must be"},
		{"missing cwd", "bash", map[string]any{"command": "true", "cwd": "nope"}, "does not exist"},
		{"justification alone", "bash", map[string]any{"command": "true", "justification": "x"}, "without sandbox_permissions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, cs, c.tool, c.args)
			assert.True(t, res.IsError)
			assert.Contains(t, text(res), c.want)
			code := errorCode(t, res)
			assert.Contains(t, []string{"INVALID_ARGUMENT", "NOT_FOUND"}, code)
		})
	}
	res := call(t, cs, "bash", map[string]any{"command": "echo alive"})
	assert.Equal(t, "alive\n", structured(t, res)["output"], "the server answers normally afterwards")
}

func TestInvalidJSONOnStdin(t *testing.T) {
	w := newWorld(t)
	cmd := newRawStdio(t, w)
	cmd.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	assert.Contains(t, cmd.recv(t), `"id":1`)
	cmd.send(t, `this is not json`)
	assert.Contains(t, cmd.recv(t), `-32700`)
	cmd.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo ok"}}}`)
	assert.Contains(t, cmd.recv(t), `ok\n`)
	_ = os.Stdout
}

func TestBashProgress(t *testing.T) {
	w := newWorld(t)
	var got atomic.Int32
	cs := w.stdio(t, clientOpts{version: "2025-11-25", progress: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		if req.Params.ProgressToken == "tok" {
			got.Add(1)
		}
	}})
	p := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "sleep 4.5; echo done"}}
	p.SetProgressToken("tok")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, "done\n", structured(t, res)["output"])
	deadline := time.Now().Add(2 * time.Second)
	for got.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	assert.GreaterOrEqual(t, got.Load(), int32(2), "a long command reports progress when asked")

	quiet := w.stdio(t, clientOpts{version: "2025-11-25"})
	res = call(t, quiet, "bash", map[string]any{"command": "sleep 2.5; echo quiet"})
	assert.Equal(t, "quiet\n", structured(t, res)["output"], "no progress token, no notifications, same result")
}

// TestBashRunsWarm: the server's foreground bash calls run in a warm
// sandbox, whose zygote forks each command and which the next call
// reuses — under bwrap the zygote is the pid namespace's init, under
// Landlock the command's parent; a background process, which outlives its
// call and takes signals, runs in a sandbox of its own.
func TestBashRunsWarm(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--backend", backend)
			zygote := "$PPID"
			if backend == "bwrap" {
				zygote = "1"
			}
			zygoteOf := fmt.Sprintf(`tr '\0' ' ' < /proc/%[1]s/cmdline; echo; cut -d' ' -f22 /proc/%[1]s/stat`, zygote)
			first := structured(t, call(t, cs, "bash", map[string]any{"command": zygoteOf}))["output"].(string)
			assert.Contains(t, first, "--zygote-serve", "a foreground call's command is the zygote's")
			// Under Landlock a change in a directory on the way to a
			// read-deny entry rightly ends the sandbox, and tests running
			// beside this one make directories in /var/tmp: a quiet moment
			// gets a few tries.
			same := false
			for try := 0; try < 5 && !same; try++ {
				again := structured(t, call(t, cs, "bash", map[string]any{"command": zygoteOf}))["output"].(string)
				same, first = again == first, again
			}
			assert.True(t, same, "the second call ran beneath the same zygote (same command line, same start time)")

			id, _ := startBackground(t, cs, map[string]any{"command": zygoteOf + "; sleep 1"})
			out := outputUntil(t, cs, id, "\n")
			assert.NotContains(t, out, "--zygote-serve", "a background process runs cold")
		})
	}
}

// TestBashNamesTheHostTmp: a model's command naming a file of the host's
// /tmp does not see it under bwrap (/tmp is the session's own, so other
// sessions' files stay out of reach), and the result says why and what to
// do; a path the session made itself in its /tmp draws no such note.
func TestBashNamesTheHostTmp(t *testing.T) {
	host, err := os.MkdirTemp("/tmp", "cordon-host-tmp-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(host) })
	tool := filepath.Join(host, "tool.sh")
	require.NoError(t, os.WriteFile(tool, []byte("#!/bin/sh\necho host-tool-ran\n"), 0o755))

	w := newWorld(t)
	cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--backend", "bwrap")
	res := call(t, cs, "bash", map[string]any{"command": tool})
	assert.NotContains(t, text(res), "host-tool-ran")
	assert.Contains(t, text(res), "["+tool+" exists on the host's /tmp, which this sandbox does not show: /tmp here is this session's private directory. Put what the command needs in the workspace instead.]")
	assert.Contains(t, structured(t, res)["notes"], "["+tool+" exists on the host's /tmp, which this sandbox does not show: /tmp here is this session's private directory. Put what the command needs in the workspace instead.]", "structuredContent says it too")

	res = call(t, cs, "bash", map[string]any{"command": "mkdir -p /tmp/mine && ls /tmp/mine/nothing"})
	assert.NotContains(t, text(res), "host's /tmp")
}
