package sandbox

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func dangerExecutor(t *testing.T) (*Executor, ExecutionPolicy) {
	t.Helper()
	return &Executor{Backends: &Backends{}, Requirement: Required},
		ExecutionPolicy{Mode: DangerFullAccess, WorkspaceRoot: t.TempDir()}
}

// TestUnconfinedCallEndsItsTree: an approved danger-full-access command is
// unconfined but bounded: everything it starts ends with its call, as a
// confined command's does (SPEC §2), and the result says so rather than
// failing on a descendant that holds the output.
func TestUnconfinedCallEndsItsTree(t *testing.T) {
	ex, pol := dangerExecutor(t)
	token := fmt.Sprintf("cordon-unconfined-%d", time.Now().UnixNano())
	out := &tailWriter{max: 1 << 20}
	res, err := ex.Run(context.Background(), pol, RunSpec{
		Argv: []string{"bash", "-c", leavers(token) + "\nsleep 0.3"}, Dir: pol.WorkspaceRoot,
		Env: Environ(os.Environ(), nil), Stdout: out, Stderr: out,
		OwnGroup: true, WaitDelay: 2 * time.Second,
	})
	require.NoError(t, err)
	assert.Equal(t, Exited, res.Ending, "runner failure: %s\n%s", res.RunnerFailure, out.String())
	assert.Equal(t, 0, res.ExitCode)
	assert.Equal(t, "none", res.Backend)
	assert.Contains(t, out.String(), "started")
	assert.Contains(t, out.String(), "the processes it left running were ended with it")
	assert.Empty(t, waitGone(token), "processes outlived the unconfined call:\n%s", processTree(token))
}

// TestUnconfinedKillEndsItsTree: a killed unconfined call (timeout,
// cancellation, process_kill) takes every process it started.
func TestUnconfinedKillEndsItsTree(t *testing.T) {
	ex, pol := dangerExecutor(t)
	token := fmt.Sprintf("cordon-unconfined-kill-%d", time.Now().UnixNano())
	out := &tailWriter{max: 1 << 20}
	proc, err := ex.Start(pol, RunSpec{
		Argv: []string{"bash", "-c", leavers(token) + "\nsleep 304; true", token}, Dir: pol.WorkspaceRoot,
		Env: Environ(os.Environ(), nil), Stdout: out, Stderr: out, OwnGroup: true, WaitDelay: 2 * time.Second,
	})
	require.NoError(t, err)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && !leaversRunning(token) {
		time.Sleep(20 * time.Millisecond)
	}
	require.True(t, leaversRunning(token), "the command should have started its processes: %s\n%s", out.String(), processTree(token))
	proc.Kill()
	<-proc.Done()
	assert.Empty(t, waitGone(token), "processes outlived the kill:\n%s", processTree(token))
}

// TestUnconfinedKeepsItsPrivileges: the reaper above an unconfined command
// takes nothing from it (no_new_privs would break sudo), and the command's
// exit, signal and missing program are reported as its own.
func TestUnconfinedKeepsItsPrivileges(t *testing.T) {
	ex, pol := dangerExecutor(t)
	run := func(script string) (RunResult, string) {
		out := &tailWriter{max: 1 << 20}
		res, err := ex.Run(context.Background(), pol, RunSpec{Argv: []string{"bash", "-c", script},
			Dir: pol.WorkspaceRoot, Env: Environ(os.Environ(), nil), Stdout: out, Stderr: out})
		require.NoError(t, err)
		return res, out.String()
	}
	res, out := run(`grep -E '^(NoNewPrivs|CapEff|Seccomp):' /proc/self/status`)
	assert.Equal(t, Exited, res.Ending, out)
	self, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(self), "\n") {
		if strings.HasPrefix(line, "NoNewPrivs:") || strings.HasPrefix(line, "CapEff:") || strings.HasPrefix(line, "Seccomp:") {
			assert.Contains(t, out, line, "the unconfined command has what cordon has")
		}
	}
	res, out = run(`exit 7`)
	assert.Equal(t, 7, res.ExitCode, out)
	res, _ = run(`kill -TERM $$`)
	assert.Equal(t, 128+15, res.ExitCode)
	out2 := &tailWriter{max: 1 << 20}
	res, err := ex.Run(context.Background(), pol, RunSpec{Argv: []string{"no-such-command-xyz"},
		Dir: pol.WorkspaceRoot, Env: Environ(os.Environ(), nil), Stdout: out2, Stderr: out2})
	require.NoError(t, err)
	assert.Equal(t, Exited, res.Ending, res.RunnerFailure)
	assert.Equal(t, 127, res.ExitCode)
	assert.Contains(t, out2.String(), "command not found")
}
