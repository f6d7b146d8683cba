package sandbox

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startIn starts argv in the fixture's workspace, its output in out.
func (f *fixture) startIn(p ExecutionPolicy, spec RunSpec) (*Process, *tailWriter) {
	f.t.Helper()
	out := &tailWriter{max: 1 << 20}
	spec.Dir, spec.Stdout, spec.Stderr, spec.OwnGroup = p.WorkspaceRoot, out, out, true
	spec.Env = append(envWithout("TERM"), "TERM=dumb")
	ex := &Executor{Backends: &Backends{Forced: f.prov.Name()}, Requirement: Required}
	proc, err := ex.Start(p, spec)
	require.NoError(f.t, err)
	f.t.Cleanup(func() { proc.Kill(); <-proc.Done() })
	return proc, out
}

func envWithout(name string) []string {
	var out []string
	for _, kv := range Environ(os.Environ(), nil) {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// waitFor polls the output (a test's stand-in for the tools' waiting).
func waitFor(t *testing.T, out *tailWriter, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if s := out.String(); strings.Contains(s, want) {
			return s
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%q never came; output so far:\n%s", want, out.String())
	return ""
}

// TestProcessTerminal: a command started with a terminal of its own is
// interactive (a REPL, a prompt), confined like any other.
func TestProcessTerminal(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		p := f.policy(ReadOnly, NetworkAllow)
		py, out := f.startIn(p, RunSpec{Argv: []string{"python3", "-i", "-q"}, TTY: true})
		waitFor(t, out, ">>> ")
		_, err := py.Input([]byte("1+1\n"))
		require.NoError(t, err)
		waitFor(t, out, "2\r\n>>> ")
		_, err = py.Input([]byte("open('escape.txt', 'w')\n"))
		require.NoError(t, err)
		waitFor(t, out, "rror") // PermissionError or OSError: read-only
		py.Input([]byte("\x04"))
		<-py.Done()
		assert.Equal(t, 0, py.Result().ExitCode)
		assert.NoFileExists(t, f.ws+"/escape.txt")

		prompt, out := f.startIn(p, RunSpec{Argv: []string{"bash", "-c", `read -p "name? " n; echo "hi $n"`}, TTY: true})
		waitFor(t, out, "name? ")
		prompt.Input([]byte("bob\n"))
		waitFor(t, out, "hi bob")
		<-prompt.Done()
	})
}

// TestProcessInputAndSignals: a stdin pipe, Ctrl-C as a signal, and a
// kill of the whole tree.
func TestProcessInputAndSignals(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		p := f.policy(ReadOnly, NetworkAllow)
		cat, out := f.startIn(p, RunSpec{Argv: []string{"cat"}, Interactive: true})
		cat.Input([]byte("echoed\n"))
		waitFor(t, out, "echoed")
		require.NoError(t, cat.CloseInput())
		<-cat.Done()
		assert.Equal(t, 0, cat.Result().ExitCode)

		// os.write, not print: the signal can land while print is still
		// inside the buffered writer, and a handler that prints then fails
		// with "reentrant call".
		script := "import os, signal, time\nsignal.signal(signal.SIGINT, lambda *a: (os.write(1, b'interrupted\\n'), os._exit(3)))\nos.write(1, b'ready\\n')\ntime.sleep(60)\n"
		py, out := f.startIn(p, RunSpec{Argv: []string{"python3", "-c", script}})
		waitFor(t, out, "ready")
		require.NoError(t, py.Signal(syscall.SIGINT))
		waitFor(t, out, "interrupted")
		<-py.Done()
		assert.Equal(t, 3, py.Result().ExitCode)
	})
}
