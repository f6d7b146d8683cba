//go:build linux

package mcpserver_test

import (
	"bufio"
	"io"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rawStdio talks to `cordon serve` line by line, for what a well-behaved
// client would never send.
type rawStdio struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

func newRawStdio(t *testing.T, w *world, extra ...string) *rawStdio {
	cmd := exec.Command(cordonBin, w.serveArgs(extra...)...)
	cmd.Env = w.env()
	cmd.Stderr = &testLogWriter{t: t}
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	r := &rawStdio{cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	return r
}

func (r *rawStdio) send(t *testing.T, line string) {
	_, err := io.WriteString(r.in, line+"\n")
	require.NoError(t, err)
}

func (r *rawStdio) recv(t *testing.T) string {
	select {
	case l, ok := <-r.lines:
		require.True(t, ok, "cordon closed stdout")
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("no answer from cordon")
	}
	return ""
}

func (r *rawStdio) kill() {
	r.cmd.Process.Signal(syscall.SIGKILL)
	r.cmd.Wait()
}
