package sandbox

import (
	"errors"
	"path/filepath"

	"github.com/cordonhq/cordon/internal/helper"

	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func launchOutcome(t *testing.T, c *ConfinedArgv) (Outcome, string) {
	t.Helper()
	l, err := c.newLaunch()
	require.NoError(t, err)
	var out bytes.Buffer
	l.Cmd.Stdout, l.Cmd.Stderr = &out, &out
	require.NoError(t, l.Start())
	o, err := l.Wait()
	require.NoError(t, err)
	return o, out.String()
}

func TestRunnerFailureIsToldFromCommandFailure(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	t.Run("runner never reached the helper", func(t *testing.T) {
		o, _ := launchOutcome(t, &ConfinedArgv{Backend: "fakewrap", statusFD: 3,
			Argv: []string{"/bin/sh", "-c", "echo 'fakewrap: cannot mount' >&2; exit 1"}})
		assert.Equal(t, "fakewrap exited 1 before the command started", o.RunnerFailure)
	})
	t.Run("helper failed to confine", func(t *testing.T) {
		o, out := launchOutcome(t, &ConfinedArgv{Backend: "landlock", statusFD: 3,
			Argv: append([]string{exe, HelperArg}, helper.Config{LandlockABI: 99, StatusFD: 3, Argv: []string{"true"}}.Args()...)})
		assert.Contains(t, o.RunnerFailure, "older than the 99")
		assert.Equal(t, 125, o.ExitCode)
		assert.Contains(t, out, "cordon: sandbox runner failed:")
	})
	t.Run("command failed on its own", func(t *testing.T) {
		o, _ := launchOutcome(t, &ConfinedArgv{Backend: "landlock", statusFD: 3,
			Argv: append([]string{exe, HelperArg}, helper.Config{StatusFD: 3, Argv: []string{"/bin/sh", "-c", "exit 125"}}.Args()...)})
		assert.Empty(t, o.RunnerFailure)
		assert.Equal(t, 125, o.ExitCode, "a command may exit 125 itself")
	})
	t.Run("command not found", func(t *testing.T) {
		o, out := launchOutcome(t, &ConfinedArgv{Backend: "landlock", statusFD: 3,
			Argv: append([]string{exe, HelperArg}, helper.Config{StatusFD: 3, Argv: []string{"no-such-command-xyz"}}.Args()...)})
		assert.Empty(t, o.RunnerFailure)
		assert.Equal(t, 127, o.ExitCode)
		assert.Contains(t, out, "command not found")
	})
	t.Run("signal", func(t *testing.T) {
		o, _ := launchOutcome(t, direct([]string{"/bin/sh", "-c", "kill -9 $$"}))
		assert.Equal(t, 137, o.ExitCode)
	})
}

func TestExecutorFailsClosed(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no bwrap
	ex := &Executor{Backends: &Backends{Forced: "bwrap"}, Requirement: Required}
	ws := t.TempDir()
	pol := ExecutionPolicy{Mode: ReadOnly, WorkspaceRoot: ws}
	_, err := ex.Prepare([]string{"true"}, pol)
	assert.ErrorIs(t, err, errUnavailable)
	assert.ErrorContains(t, err, "bwrap not found on PATH")

	var warned string
	auto := &Executor{Backends: ex.Backends, Requirement: Auto, Warn: func(s string) { warned = s }}
	c, err := auto.Prepare([]string{"true"}, pol)
	require.NoError(t, err)
	assert.Equal(t, "none", c.Backend)
	assert.Contains(t, warned, "running unconfined")

	c, err = ex.Prepare([]string{"true"}, ExecutionPolicy{Mode: DangerFullAccess, WorkspaceRoot: ws})
	require.NoError(t, err)
	assert.Equal(t, "none", c.Backend, "danger runs unconfined")
	assert.Equal(t, []string{"--unconfined", "--", "true"}, c.Argv[len(c.Argv)-3:], "beneath the reaper, which confines nothing")
	off := &Executor{Backends: ex.Backends, Requirement: Off}
	assert.Equal(t, StateBypassed, off.Status().State)
}

func TestExplainBwrapNamespaceFailure(t *testing.T) {
	pinContainerHints(t, containerHints{}) // the host's advice, even where the tests run in a container
	dir := t.TempDir()
	fake := "#!/bin/sh\ncase \"$1\" in --version) echo 'bubblewrap 0.9.0';; *) echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1;; esac\n"
	require.NoError(t, os.WriteFile(dir+"/bwrap", []byte(fake), 0o755))
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	lp := &Backends{Forced: "bwrap"}
	_, st := lp.Select()
	assert.Equal(t, StateUnavailable, st.State)
	assert.Contains(t, st.Reason, "cannot create user namespaces")
	assert.Contains(t, st.Reason, "AppArmor")
	assert.Contains(t, st.Reason, "bwrap-userns-restrict")
	_, err := exec.LookPath("bwrap")
	require.NoError(t, err)
}

func TestProbeCatchesAMissingFlag(t *testing.T) {
	// A backend that forgets the read-only root confines nothing: the
	// probe must say so rather than pass.
	res := probeBackend(leakyBackend{Backend: newLandlock()}, "")
	assert.False(t, res.OK)
	assert.Contains(t, res.Reason, "NOT denied")
}

// leakyBackend "confines" by running the command directly.
type leakyBackend struct{ Backend }

func (leakyBackend) Confine(argv []string, _ ConfinedPolicy) (*ConfinedArgv, error) {
	return direct(argv), nil
}

// TestNeverRanIsTyped: a command the sandbox refuses before any process
// starts comes back as a *NeverRanError, its cause still reachable; one
// whose runner started is not one, even when the command itself is
// missing. The tools tell "did not run" from "runner failed" by it.
func TestNeverRanIsTyped(t *testing.T) {
	ws := t.TempDir()
	canary := filepath.Join(ws, "ran")
	t.Run("no backend", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir()) // no bwrap
		ex := &Executor{Backends: &Backends{Forced: "bwrap"}, Requirement: Required}
		_, err := ex.Run(t.Context(), ExecutionPolicy{Mode: ReadOnly, WorkspaceRoot: ws},
			RunSpec{Argv: []string{"/bin/sh", "-c", "touch " + canary}, Dir: ws})
		var never *NeverRanError
		require.ErrorAs(t, err, &never)
		var ue *UnavailableError
		assert.ErrorAs(t, err, &ue, "the cause is kept")
		assert.NoFileExists(t, canary)
	})
	t.Run("no command", func(t *testing.T) {
		ex := &Executor{Backends: &Backends{}, Requirement: Off}
		_, err := ex.Run(t.Context(), ExecutionPolicy{Mode: DangerFullAccess, WorkspaceRoot: ws}, RunSpec{Dir: ws})
		var never *NeverRanError
		assert.ErrorAs(t, err, &never, "an empty argv is refused before anything starts")
	})
	t.Run("started", func(t *testing.T) {
		ex := &Executor{Backends: &Backends{}, Requirement: Off}
		_, err := ex.Run(t.Context(), ExecutionPolicy{Mode: DangerFullAccess, WorkspaceRoot: ws},
			RunSpec{Argv: []string{"no-such-command-xyz"}, Dir: ws})
		var never *NeverRanError
		assert.False(t, errors.As(err, &never), "a runner that started is no refusal: %v", err)
	})
}
