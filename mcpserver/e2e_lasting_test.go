//go:build linux

package mcpserver_test

import (
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

// TestLastingProtectionLostEndsBackgroundProcess: the human's `git config`
// replaces the .git/config that a workspace-write background process's
// sandbox keeps read-only; the process is killed with reason
// protection-lost, which process_list, process_output and the session log
// say, and what it tried to plant is not on the host.
func TestLastingProtectionLostEndsBackgroundProcess(t *testing.T) {
	w := newWorld(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", w.ws}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+w.home, "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	git("init", "-q")
	cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "workspace-write", "--backend", "bwrap")
	token := fmt.Sprintf("cordon-lasting-%d", time.Now().UnixNano())
	canary := filepath.Join(w.base, "fsmonitor-ran")
	id, _ := startBackground(t, cs, map[string]any{"command": fmt.Sprintf(
		`exec bash -c 'n=0; while :; do git config core.fsmonitor "touch %s" 2>/dev/null && echo WROTE; n=$((n+1)); echo "try $n"; sleep 0.05; done' %s`, canary, token)})
	outputUntil(t, cs, id, "try 2")

	git("config", "user.name", "Human")

	require.Eventually(t, func() bool { return gone(token) }, 30*time.Second, 50*time.Millisecond, "the process lived on after its protection moved")
	// Gone from the host a moment before cordon has reaped its sandbox
	// and recorded the end.
	var res *mcp.CallToolResult
	var procs []any
	require.Eventually(t, func() bool {
		res = call(t, cs, "process_list", map[string]any{})
		procs, _ = structured(t, res)["processes"].([]any)
		return len(procs) == 1 && procs[0].(map[string]any)["running"] == false
	}, 30*time.Second, 100*time.Millisecond, "cordon never recorded the process's end")
	assert.Equal(t, "protection-lost", procs[0].(map[string]any)["ended"], text(res))
	out := call(t, cs, "process_output", map[string]any{"process_id": id})
	assert.Contains(t, text(out), "protection-lost", text(out))
	// The human's change is not lost: kept aside, and said so.
	kept, err := filepath.Glob(filepath.Join(w.ws, ".git", "config.cordon-host-*"))
	require.NoError(t, err)
	require.Len(t, kept, 1, text(out))
	mine, err := os.ReadFile(kept[0])
	require.NoError(t, err)
	assert.Contains(t, string(mine), "name = Human")
	assert.Contains(t, text(out), "the host changed "+filepath.Join(w.ws, ".git", "config")+" while a sandbox lived; cordon restored the version from before and kept yours as "+kept[0], text(out))
	session := sessionOf(t, w)
	assert.Eventually(t, func() bool {
		return strings.Contains(cordonCLI(t, w, "log", "--json", session), `"reason":"protection-lost"`)
	}, 30*time.Second, 200*time.Millisecond, "the session log records the process's end as protection-lost")
	assert.Contains(t, cordonCLI(t, w, "log", "--json", session), `"host_kept"`, "the session log says where the human's version is")

	cfg, err := os.ReadFile(filepath.Join(w.ws, ".git", "config"))
	require.NoError(t, err)
	assert.False(t, strings.Contains(string(cfg), "fsmonitor"), "what the sandbox wrote through the loss stayed:\n%s", cfg)
	git("status")
	assert.NoFileExists(t, canary, "the human's git status ran the planted fsmonitor")
}

// TestLastingCredentialStoreInBackground: `git credential-store` replaces
// ~/.git-credentials while a read-only background process keeps reading
// it: the new secret never reaches the process.
func TestLastingCredentialStoreInBackground(t *testing.T) {
	w := newWorld(t)
	creds := filepath.Join(w.home, ".git-credentials")
	require.NoError(t, os.WriteFile(creds, []byte("https://old:OLD-SECRET@example.com\n"), 0o600))
	cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--mode", "read-only", "--backend", "bwrap")
	id, _ := startBackground(t, cs, map[string]any{"command": fmt.Sprintf(
		`n=0; while :; do cat %s 2>&1; n=$((n+1)); echo "try $n"; sleep 0.05; done`, creds)})
	seen := outputUntil(t, cs, id, "try 2")

	store := exec.Command("git", "credential-store", "--file", creds, "store")
	store.Stdin = strings.NewReader("protocol=https\nhost=example.com\nusername=new\npassword=NEW-SECRET\n\n")
	out, err := store.CombinedOutput()
	require.NoError(t, err, "%s", out)

	// Some more tries, or the process's end; never the secret.
	seen += outputUntil(t, cs, id, "try 30")
	call(t, cs, "process_kill", map[string]any{"process_id": id})
	seen += text(call(t, cs, "process_output", map[string]any{"process_id": id}))
	assert.False(t, strings.Contains(seen, "NEW-SECRET"), "the background process read the replaced credentials")
	assert.False(t, strings.Contains(seen, "OLD-SECRET"), "the background process read the credentials")
}
