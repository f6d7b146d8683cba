//go:build linux

package mcpserver_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveLogged starts `cordon serve` with extra environment and keeps its
// log (stderr) for the test to read.
func (w *world) serveLogged(t *testing.T, env []string, extra ...string) (*mcp.ClientSession, *logBuffer) {
	t.Helper()
	cmd := exec.Command(cordonBin, w.serveArgs(extra...)...)
	cmd.Env = append(w.env(), env...)
	log := &logBuffer{}
	cmd.Stderr = log
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := newClient(clientOpts{}).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs, log
}

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitLog polls the server's log for want, with a generous deadline.
func waitLog(t *testing.T, log *logBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(log.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the server's log never said %q:\n%s", want, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeRefusesWorkspaceAtHome: a server whose workspace is the home
// directory, in workspace-write, refuses every command and file write with
// SANDBOX_UNAVAILABLE naming the root and the fix, on both backends, and
// nothing is written; it says so at start-up, sandbox_status shows it,
// reads still work, and a project directory inside the home works.
func TestServeRefusesWorkspaceAtHome(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			require.NoError(t, os.WriteFile(filepath.Join(w.home, "notes.txt"), []byte("home notes\n"), 0o644))
			cs, log := w.serveLogged(t, nil, "--workspace", w.home, "--mode", "workspace-write", "--backend", backend)
			waitLog(t, log, "workspace-write commands and file writes will be refused")

			planted := []string{filepath.Join(w.home, ".bashrc"), filepath.Join(w.home, ".profile"), filepath.Join(w.home, ".cargo", "env")}
			res := call(t, cs, "bash", map[string]any{"command": `echo pwned >> ~/.bashrc; mkdir -p ~/.cargo && echo pwned > ~/.cargo/env`})
			require.True(t, res.IsError, text(res))
			assert.Equal(t, "SANDBOX_UNAVAILABLE", errorCode(t, res))
			assert.Contains(t, text(res), "the writable root "+w.home+" (the workspace)")
			assert.Contains(t, text(res), "project directory")

			res = call(t, cs, "write_file", map[string]any{"path": planted[1], "content": "echo pwned\n"})
			require.True(t, res.IsError, text(res))
			assert.Equal(t, "SANDBOX_UNAVAILABLE", errorCode(t, res))
			for _, p := range planted {
				assert.NoFileExists(t, p, "the refused call wrote it")
			}

			res = call(t, cs, "read_file", map[string]any{"path": filepath.Join(w.home, "notes.txt")})
			require.False(t, res.IsError, text(res))
			assert.Contains(t, text(res), "home notes")

			res = call(t, cs, "sandbox_status", map[string]any{})
			require.False(t, res.IsError, text(res))
			assert.Contains(t, structured(t, res)["refused"], "the writable root "+w.home)

			// A project inside the home works.
			proj := filepath.Join(w.home, "src", "proj")
			require.NoError(t, os.MkdirAll(proj, 0o755))
			cs2, _ := w.serveLogged(t, nil, "--workspace", proj, "--mode", "workspace-write", "--backend", backend)
			res = call(t, cs2, "bash", map[string]any{"command": `echo built > out.txt && cat out.txt`})
			require.False(t, res.IsError, text(res))
			assert.Equal(t, "built\n", fileContent(t, filepath.Join(proj, "out.txt")))
		})
	}
}

// TestServeWarnsRelativePath: a relative or empty PATH entry in the
// environment cordon serve starts with is warned about by name at
// start-up and in sandbox_status.
func TestServeWarnsRelativePath(t *testing.T) {
	w := newWorld(t)
	path := "./node_modules/.bin:" + os.Getenv("PATH") + ":"
	cs, log := w.serveLogged(t, []string{"PATH=" + path}, "--mode", "workspace-write")
	waitLog(t, log, `PATH holds the relative entry \"./node_modules/.bin\"`)
	waitLog(t, log, "PATH holds an empty entry")
	res := call(t, cs, "sandbox_status", map[string]any{})
	require.False(t, res.IsError, text(res))
	assert.Contains(t, text(res), `warning: PATH holds the relative entry "./node_modules/.bin"`)
	warns, _ := structured(t, res)["warnings"].([]any)
	require.Len(t, warns, 2, "%v", warns)
	assert.Contains(t, warns[0], "./node_modules/.bin")
}
