//go:build linux

package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCordonUsesTheLeanHelper builds cordon and cordon-helper side by side:
// cordon must confine through the lean helper, and fall back to itself
// when the helper is missing or writable by others.
func TestCordonUsesTheLeanHelper(t *testing.T) {
	dir, err := os.MkdirTemp("/var/tmp", "cordon-helper-test-")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	require.NoError(t, os.Chmod(dir, 0o755))
	cordon, helper := filepath.Join(dir, "cordon"), filepath.Join(dir, "cordon-helper")
	for pkg, out := range map[string]string{"../cordon": cordon, ".": helper} {
		b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput()
		require.NoError(t, err, string(b))
	}
	ws := filepath.Join(dir, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	state := filepath.Join(dir, "state")

	argv0 := func(backend string) string {
		out, err := exec.Command(cordon, "profile", "--json", "--backend", backend, "--workspace", ws, "--state-dir", state).Output()
		require.NoError(t, err)
		var prof struct{ Argv []string }
		require.NoError(t, json.Unmarshal(out, &prof))
		if backend == "bwrap" {
			return strings.Join(prof.Argv, " ")
		}
		return prof.Argv[0]
	}
	assert.Equal(t, helper, argv0("landlock"), "the lean helper confines commands")
	for _, backend := range []string{"landlock", "bwrap"} {
		cmd := exec.Command(cordon, "exec", "--backend", backend, "--workspace", ws, "--state-dir", state, "--", "sh", "-c",
			"grep -E '^(NoNewPrivs|CapEff|Seccomp):' /proc/self/status; echo hi > f; echo x >> /etc/hostname")
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "the write outside must fail: %s", out)
		assert.Contains(t, string(out), "NoNewPrivs:\t1", backend)
		assert.Contains(t, string(out), "CapEff:\t0000000000000000", backend)
		assert.Contains(t, string(out), "Seccomp:\t2", backend)
		assert.FileExists(t, filepath.Join(ws, "f"))
		out, err = exec.Command(cordon, "test", "--backend", backend, "--workspace", ws, "--state-dir", state).CombinedOutput()
		assert.NoError(t, err, string(out))
	}

	require.NoError(t, os.Chmod(helper, 0o777))
	assert.Equal(t, cordon, argv0("landlock"), "a helper others could replace is not trusted")
	require.NoError(t, os.Remove(helper))
	assert.Equal(t, cordon, argv0("landlock"), "without the helper cordon re-executes itself")
}
