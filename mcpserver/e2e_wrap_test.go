//go:build linux

package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// npmServer is a server's bin from test/interop's lock file. CI installs
// them (CORDON_INTEROP): there a missing one fails the test.
func npmServer(t testing.TB, bin string) string {
	path, _ := filepath.Abs("../test/interop/node_modules/.bin/" + bin)
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CORDON_INTEROP") != "" {
			t.Fatalf("CORDON_INTEROP is set but %s is missing: %v", path, err)
		}
		t.Skipf("%s is missing (cd test/interop && npm ci); CI installs it", path)
	}
	return path
}

// fourKiB is the file the read benchmarks read: 241 short lines.
var fourKiB = strings.Repeat("0123456789abcdef\n", 241)

// writeFourKiB puts fourKiB at f.txt in the workspace.
func writeFourKiB(t testing.TB, w *world) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(w.ws, "f.txt"), []byte(fourKiB), 0o644); err != nil {
		t.Fatal(err)
	}
}

// connectCommand starts argv in the workspace with the world's
// environment (and env) and connects an MCP client to it over stdio.
func connectCommand(t *testing.T, w *world, env []string, argv ...string) *mcp.ClientSession {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = append(w.env(), env...), w.ws
	cmd.Stderr = &testLogWriter{t: t}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := newClient(clientOpts{}).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	return cs
}

// TestWrapFilesystemServer: the official filesystem server, from npm,
// started with / as its allowed directory, so that its own checks allow
// everything: wrapped by cordon, it still cannot write outside its class's
// places or read the read-deny list (judged on the host), its tools are
// the same as unwrapped, and nothing it started outlives the client.
func TestWrapFilesystemServer(t *testing.T) {
	fsServer := npmServer(t, "mcp-server-filesystem")
	tools := func(t *testing.T, cs *mcp.ClientSession) string {
		res, err := cs.ListTools(context.Background(), nil)
		require.NoError(t, err)
		b, err := json.Marshal(res.Tools)
		require.NoError(t, err)
		return string(b)
	}
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			plain := connectCommand(t, w, nil, fsServer, "/")
			want := tools(t, plain)
			plain.Close()

			cs := connectCommand(t, w, nil, cordonBin, "wrap", "--backend", backend, "--state-dir", w.state, "--workspace", w.ws, "--", fsServer, "/")
			assert.Equal(t, want, tools(t, cs), "a wrapped server's tools are the unwrapped one's")

			planted := filepath.Join(w.outside, "planted.sh")
			inWorkspace := filepath.Join(w.ws, "written.txt")
			for _, path := range []string{planted, inWorkspace, filepath.Join(w.home, ".bashrc")} {
				res := call(t, cs, "write_file", map[string]any{"path": path, "content": "echo pwned\n"})
				assert.True(t, res.IsError, "%s: %s", path, text(res))
				assert.NoFileExists(t, path, "the write did not happen")
			}
			res := call(t, cs, "read_text_file", map[string]any{"path": w.secret})
			assert.NotContains(t, text(res), "SECRET-CANARY", "the read-deny list holds")
			assert.Equal(t, "outside\n", fileContent(t, w.outsideFile), "unchanged")
			// Its own place is writable: where its data goes.
			own := filepath.Join(w.state, "wrap", "mcp-server-filesystem", "notes.txt")
			res = call(t, cs, "write_file", map[string]any{"path": own, "content": "kept\n"})
			assert.False(t, res.IsError, text(res))
			assert.Equal(t, "kept\n", fileContent(t, own))

			require.NoError(t, cs.Close())
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) && len(processesIn(w.ws)) > 0 {
				time.Sleep(100 * time.Millisecond)
			}
			assert.Empty(t, processesIn(w.ws), "nothing the wrapped server started outlives the client")
		})
	}
}

// processesIn lists the pids whose working directory is dir.
func processesIn(dir string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestWrapMemoryServer: the official memory server, from npm, keeps its
// knowledge graph under its class directory across restarts; the place it
// would write by default, its own install directory, stays untouched.
func TestWrapMemoryServer(t *testing.T) {
	memServer := npmServer(t, "mcp-server-memory")
	installed, _ := filepath.EvalSymlinks(memServer)
	defaultFile := filepath.Join(filepath.Dir(installed), "memory.jsonl")
	os.Remove(defaultFile)
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			classFile := filepath.Join(w.state, "wrap", "memory", "memory.jsonl")
			start := func(env ...string) *mcp.ClientSession {
				return connectCommand(t, w, env, cordonBin, "wrap", "--name", "memory", "--backend", backend, "--state-dir", w.state, "--workspace", w.ws, "--", memServer)
			}
			entity := map[string]any{"entities": []any{map[string]any{"name": "cordon", "entityType": "project", "observations": []any{"wraps servers"}}}}

			cs := start()
			res := call(t, cs, "create_entities", entity)
			assert.True(t, res.IsError, "its install directory is not its to write: %s", text(res))
			cs.Close()
			assert.NoFileExists(t, defaultFile)

			cs = start("MEMORY_FILE_PATH=" + classFile)
			res = call(t, cs, "create_entities", entity)
			require.False(t, res.IsError, text(res))
			cs.Close()
			assert.FileExists(t, classFile)

			cs = start("MEMORY_FILE_PATH=" + classFile)
			defer cs.Close()
			assert.Contains(t, text(call(t, cs, "read_graph", map[string]any{})), "wraps servers", "kept across restarts")
		})
	}
}

// TestWrapExternalAgent: Claude Code, from npm, run as an external agent
// under cordon wrap, pointed at a local stand-in of its model API that has
// it run one command with its own Bash tool: the command writes the
// workspace and the agent's own config home (CLAUDE_CONFIG_DIR, beneath
// its class directory), and nothing else: not the human's ~/.claude.
func TestWrapExternalAgent(t *testing.T) {
	claude := claudeCode(t)
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			cfgDir := filepath.Join(w.home, ".claude")
			require.NoError(t, os.MkdirAll(cfgDir, 0o700))
			script := fmt.Sprintf("echo ws > %s; echo note > \"$CLAUDE_CONFIG_DIR/agent-note\"; echo human > %s; echo out > %s; echo rc > %s; echo finished",
				filepath.Join(w.ws, "agent.txt"), filepath.Join(cfgDir, "agent-note"),
				filepath.Join(w.outside, "planted.txt"), filepath.Join(w.home, ".bashrc"))
			// One command, so that one permission rule allows it.
			require.NoError(t, os.WriteFile(filepath.Join(w.ws, "write.sh"), []byte(script+"\n"), 0o644))
			model := newAnthropicStandInNaming(t, []agentStep{{"Bash", map[string]any{"command": "sh write.sh", "description": "write files"}}}, "")
			env := claudeEnv(w, model.url)
			out, err := runAgent(t, w.ws, env, 120*time.Second, cordonBin,
				"wrap", "--class", "external_agent", "--mode", "workspace-write", "--backend", backend, "--state-dir", w.state, "--",
				claude, "-p", "Write the files.", "--allowedTools", "Bash(sh:*)", "--output-format", "json", "--no-session-persistence")
			require.NoError(t, err, "cordon wrap -- claude -p: %s", out)
			received := model.received()
			require.Len(t, received, 1, out)
			assert.Contains(t, received[0], "finished", "the command ran")
			assert.Equal(t, "ws\n", fileContent(t, filepath.Join(w.ws, "agent.txt")), "the workspace is the agent's")
			assert.Equal(t, "note\n", fileContent(t, filepath.Join(w.state, "wrap", "claude", "claude", "agent-note")), "so is its own config home")
			assert.NoFileExists(t, filepath.Join(cfgDir, "agent-note"), "not the human's")
			assert.NoFileExists(t, filepath.Join(w.outside, "planted.txt"), "nothing else")
			assert.NoFileExists(t, filepath.Join(w.home, ".bashrc"), "no start-up file")
		})
	}
}
