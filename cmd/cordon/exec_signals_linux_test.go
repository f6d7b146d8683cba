//go:build linux

package main

import (
	"bufio"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExecForwardsSignals: a SIGTERM or SIGINT sent to `cordon exec`
// reaches the command, which may handle it, on both backends. (The reaper
// ignores a signal sent to itself: cordon passes it on through the reaper's
// control pipe, or to the sandbox's processes under bwrap.)
func TestExecForwardsSignals(t *testing.T) {
	ws, state := workspace(t)
	script := "import os, signal, time\n" +
		"def said(n, _):\n    os.write(1, b'got %d\\n' % n)\n    os._exit(3)\n" +
		"signal.signal(signal.SIGTERM, said)\nsignal.signal(signal.SIGINT, said)\n" +
		"os.write(1, b'ready\\n')\ntime.sleep(60)\n"
	for _, backend := range []string{"bwrap", "landlock"} {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
			t.Run(backend+"/"+sig.String(), func(t *testing.T) {
				cmd := exec.Command(cordonBin, "exec", "--backend", backend, "--state-dir", state, "--", "python3", "-c", script)
				cmd.Dir = ws
				stdout, err := cmd.StdoutPipe()
				require.NoError(t, err)
				require.NoError(t, cmd.Start())
				t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
				lines := make(chan string, 4)
				go func() {
					s := bufio.NewScanner(stdout)
					for s.Scan() {
						lines <- s.Text()
					}
					close(lines)
				}()
				next := func() string {
					select {
					case l := <-lines:
						return l
					case <-time.After(30 * time.Second):
						t.Fatal("no line from the command")
						return ""
					}
				}
				require.Equal(t, "ready", next())
				require.NoError(t, cmd.Process.Signal(sig))
				assert.Equal(t, "got "+strconv.Itoa(int(sig)), next())
				err = cmd.Wait()
				var exitErr *exec.ExitError
				require.ErrorAs(t, err, &exitErr)
				assert.Equal(t, 3, exitErr.ExitCode())
			})
		}
	}
}
