//go:build linux

package mcpserver_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inspectorCLI is the MCP Inspector's CLI mode, installed by .ci/run from
// test/interop's lock file. It is a client nobody on this project wrote,
// and it declares no elicitation capability.
func inspectorCLI(t *testing.T) string {
	bin, _ := filepath.Abs("../test/interop/node_modules/.bin/mcp-inspector")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CORDON_INTEROP") != "" {
			t.Fatalf("CORDON_INTEROP is set but the Inspector is not installed: run npm ci in test/interop (%v)", err)
		}
		t.Skip("the MCP Inspector is not installed (npm ci in test/interop); CI installs it and sets CORDON_INTEROP=1")
	}
	return bin
}

func TestInspectorWithoutElicitationFailsClosed(t *testing.T) {
	bin := inspectorCLI(t)
	w := newWorld(t)
	target := filepath.Join(w.ws, "x")
	args := append([]string{"--cli", cordonBin}, w.serveArgs("--mode", "read-only")...)
	args = append(args, "--method", "tools/call", "--tool-name", "bash",
		"--tool-arg", "command=touch "+target,
		"--tool-arg", "sandbox_permissions=workspace-write",
		"--tool-arg", "justification=the build writes here")
	cmd := exec.Command(bin, args...)
	cmd.Env = w.env()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the Inspector exits non-zero on isError: %s", out)
	assert.Equal(t, 5, ee.ExitCode(), string(out))
	assert.Contains(t, string(out), "ESCALATION_NO_APPROVER")
	assert.Contains(t, string(out), "[sandbox: file access denied under read-only mode]")
	assert.NoFileExists(t, target)

	cmd = exec.Command(bin, append([]string{"--cli", cordonBin}, append(w.serveArgs(), "--method", "tools/list")...)...)
	cmd.Env = w.env()
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	for _, tool := range []string{"bash", "read_file", "write_file", "edit_file", "list_directory", "glob", "grep", "sandbox_status"} {
		assert.True(t, strings.Contains(string(out), `"name": "`+tool+`"`), "tools/list lacks %s", tool)
	}
}
