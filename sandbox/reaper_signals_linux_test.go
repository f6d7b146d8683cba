package sandbox

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reaperCases are the launches with a reaping helper: both backends, and
// an unconfined command (whose reaper listens through os/signal rather
// than ignoring).
func reaperCases(t *testing.T, fn func(t *testing.T, start func(RunSpec) (*Process, *tailWriter))) {
	for _, prov := range []Backend{newBwrap(), newLandlock()} {
		t.Run(prov.Name(), func(t *testing.T) {
			f := newFixture(t, prov)
			p := f.policy(ReadOnly, NetworkAllow)
			ex := &Executor{Backends: &Backends{Forced: prov.Name()}, Requirement: Required}
			fn(t, func(spec RunSpec) (*Process, *tailWriter) { return startWith(t, ex, p, spec) })
		})
	}
	t.Run("unconfined", func(t *testing.T) {
		ex, p := dangerExecutor(t)
		fn(t, func(spec RunSpec) (*Process, *tailWriter) { return startWith(t, ex, p, spec) })
	})
}

func startWith(t *testing.T, ex *Executor, p ExecutionPolicy, spec RunSpec) (*Process, *tailWriter) {
	t.Helper()
	out := &tailWriter{max: 1 << 20}
	spec.Dir, spec.Stdout, spec.Stderr, spec.OwnGroup = p.WorkspaceRoot, out, out, true
	if spec.Env == nil {
		spec.Env = envWithout("GOMAXPROCS")
	}
	proc, err := ex.Start(p, spec)
	require.NoError(t, err)
	t.Cleanup(func() { proc.Kill(); <-proc.Done() })
	return proc, out
}

// TestReaperOutlivesSignalsSentToIt: a signal sent to the reaper itself
// (the terminal's ^C under `cordon exec`, a kill of its process group)
// neither kills it — its command would then be killed, and its orphans
// left to init — nor reaches the command; one sent through Process.Signal
// (the control pipe) still does.
func TestReaperOutlivesSignalsSentToIt(t *testing.T) {
	reaperCases(t, func(t *testing.T, start func(RunSpec) (*Process, *tailWriter)) {
		script := "import os, signal, time\nsignal.signal(signal.SIGINT, lambda *a: (os.write(1, b'interrupted\\n'), os._exit(3)))\nos.write(1, b'ready\\n')\ntime.sleep(60)\n"
		py, out := start(RunSpec{Argv: []string{"python3", "-c", script}})
		waitFor(t, out, "ready")
		reaper := py.l.Cmd.Process.Pid
		for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM} {
			require.NoError(t, syscall.Kill(reaper, sig))
		}
		// Handled (or not) once nothing is pending: a reaper they killed
		// is gone by then, before it could read the pipe.
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) && signalsPending(reaper) {
			time.Sleep(10 * time.Millisecond)
		}
		require.NoError(t, py.Signal(syscall.SIGINT))
		waitFor(t, out, "interrupted")
		<-py.Done()
		assert.Equal(t, 3, py.Result().ExitCode, "the command ended otherwise: %s", out.String())
		assert.NotContains(t, out.String(), "Terminated")
	})
}

// signalsPending says whether pid has a signal pending, or false once it
// is gone.
func signalsPending(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "ShdPnd:"); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return n != 0
		}
	}
	return false
}

// TestCommandKeepsItsGOMAXPROCS: cordon starts a reaper with GOMAXPROCS=1,
// which must never reach the command: it gets its own value, or none. Nor
// does a signal the reaper ignores stay ignored in the command.
func TestCommandKeepsItsGOMAXPROCS(t *testing.T) {
	reaperCases(t, func(t *testing.T, start func(RunSpec) (*Process, *tailWriter)) {
		for _, own := range []string{"", "7"} {
			env := envWithout("GOMAXPROCS")
			want := "gomaxprocs=unset"
			if own != "" {
				env, want = append(env, "GOMAXPROCS="+own), "gomaxprocs="+own
			}
			p, out := start(RunSpec{Argv: []string{"/bin/sh", "-c", `echo "gomaxprocs=${GOMAXPROCS-unset}"; grep SigIgn /proc/self/status`}, Env: env})
			<-p.Done()
			assert.Equal(t, want+"\nSigIgn:\t0000000000000000", strings.TrimSpace(out.String()))
		}
	})
}
