package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/creack/pty"
)

// leavers start processes that try to outlive the call every way a shell
// can: a new session, nohup with disown, a double fork, a daemon that
// closes its descriptors. Each carries token in its argv.
func leavers(token string) string {
	// "sleep N; true" keeps the shell (and its argv with the token) alive.
	return fmt.Sprintf(`setsid -f bash -c 'sleep 300; true' %[1]s
nohup bash -c 'sleep 301; true' %[1]s >/dev/null 2>&1 & disown
( (bash -c 'sleep 302; true' %[1]s &) & )
setsid bash -c 'exec </dev/null >/dev/null 2>&1; sleep 303; true' %[1]s &
echo started`, token)
}

// leaversRunning: each shell leavers(token) starts is running as itself.
// A count of processes with the token is no test of that: a fork on its way
// to exec carries its parent's argv, and a process in the middle of exec
// has no argv to read, so the count rises and falls while they start.
func leaversRunning(token string) bool {
	for n := 300; n <= 303; n++ {
		if !slices.ContainsFunc(processesWith(token), func(pid int) bool {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			argv := strings.Split(string(cmdline), "\x00")
			// (the runner's own script names every sleep too)
			return len(argv) == 5 && argv[0] == "bash" && argv[1] == "-c" &&
				!strings.Contains(argv[2], "\n") && strings.HasSuffix(argv[2], fmt.Sprintf("sleep %d; true", n))
		}) {
			return false
		}
	}
	return true
}

// waitGone gives killed processes a moment to leave the process table.
func waitGone(token string) []int {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && len(processesWith(token)) > 0 {
		time.Sleep(20 * time.Millisecond)
	}
	return processesWith(token)
}

// TestNoProcessOutlivesItsCall: when the command exits, everything it
// started is gone from the host's process table, on every backend and in
// both modes (SPEC §2).
func TestNoProcessOutlivesItsCall(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		for _, mode := range []Mode{ReadOnly, WorkspaceWrite} {
			token := fmt.Sprintf("cordon-leaver-%d", time.Now().UnixNano())
			out, code := f.run(f.policy(mode, NetworkAllow), "bash", "-c", leavers(token)+"\nsleep 0.3")
			require.Equal(t, 0, code, out)
			assert.Contains(t, out, "started")
			assert.Empty(t, waitGone(token), "%s: processes outlived the call:\n%s", mode, processTree(token))
		}
	})
}

// TestKillEndsTheWholeTree: a call that is killed (timeout, cancellation)
// takes every process its command started with it, including those that
// left its process group.
func TestKillEndsTheWholeTree(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		token := fmt.Sprintf("cordon-killed-%d", time.Now().UnixNano())
		cp, err := f.policy(WorkspaceWrite, NetworkAllow).ToConfined()
		require.NoError(t, err)
		c, err := prov.Confine([]string{"bash", "-c", leavers(token) + "\nsleep 304; true", token}, cp)
		require.NoError(t, err)
		l, err := c.newLaunch()
		require.NoError(t, err)
		l.OwnGroup = true
		out := &tailWriter{max: 1 << 20} // read while the command writes
		l.Cmd.Stdout, l.Cmd.Stderr, l.Cmd.Dir = out, out, f.ws
		require.NoError(t, l.Start())
		// A loaded CI machine (the race detector, other packages' tests)
		// can take seconds to start them all: wait for them, not a time.
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) && !leaversRunning(token) {
			time.Sleep(20 * time.Millisecond)
		}
		require.True(t, leaversRunning(token), "the command should have started its processes: %s\n%s", out.String(), processTree(token))
		l.Kill()
		o, err := l.Wait()
		require.NoError(t, err)
		assert.NotEqual(t, 0, o.ExitCode)
		assert.Empty(t, waitGone(token), "processes outlived the kill:\n%s", processTree(token))
	})
}

// TestReaperKeepsTheCommandsExit: the Landlock helper stays as the
// command's parent, and still reports its exit code and its signal.
func TestReaperKeepsTheCommandsExit(t *testing.T) {
	f := newFixture(t, newLandlock())
	p := f.policy(ReadOnly, NetworkAllow)
	_, code := f.sh(p, `exit 7`)
	assert.Equal(t, 7, code)
	_, o := f.launch(p, "/bin/sh", "-c", `kill -TERM $$`)
	assert.Equal(t, 128+15, o.ExitCode)
	assert.Equal(t, unix.SIGTERM, o.Signal)
	out, code := f.sh(p, `echo out; echo err >&2`)
	assert.Equal(t, 0, code)
	assert.Equal(t, "out\nerr\n", out)
}

// TestKernelObjectsRefused: keyrings, other processes' limits and
// priorities, and (without an IPC namespace) SysV IPC are out of reach.
func TestKernelObjectsRefused(t *testing.T) {
	host := exec.Command("sleep", "60")
	require.NoError(t, host.Start())
	t.Cleanup(func() { host.Process.Kill(); host.Wait() })
	hostPid := strconv.Itoa(host.Process.Pid)
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		for _, mode := range []Mode{ReadOnly, WorkspaceWrite} {
			p := f.policy(mode, NetworkAllow)
			assert.Equal(t, "EPERM", f.probe(p, "add-key"), "%s: adding a key", mode)
			assert.Equal(t, "EPERM", f.probe(p, "read-key", "-3"), "%s: reading the session keyring", mode)
			assert.Equal(t, "ok", f.probe(p, "prlimit", "0"), "%s: its own limits stay readable", mode)
			assert.Equal(t, "ok", f.probe(p, "setpriority", "0"), "%s: nice on itself stays allowed", mode)
			if prov.Name() == "landlock" {
				// bwrap's pid namespace hides the host process already.
				assert.Equal(t, "EPERM", f.probe(p, "prlimit", hostPid), "%s: another process's limits", mode)
				assert.Equal(t, "EPERM", f.probe(p, "setpriority", hostPid), "%s: another process's priority", mode)
				assert.Equal(t, "EPERM", f.probe(p, "shmget"), "%s: SysV shared memory of the host", mode)
			} else {
				assert.Equal(t, "ok", f.probe(p, "shmget"), "bwrap has an IPC namespace of its own")
			}
		}
	})
	limits, err := os.ReadFile("/proc/" + hostPid + "/limits")
	require.NoError(t, err)
	assert.NotContains(t, string(limits), "Max open files            8", "the host process's limits changed")
}

// TestLandlockRefusesTheControlPlane: a workspace that contains cordon's
// config directory (XDG_CONFIG_HOME in a project) cannot be confined by
// Landlock, which could not keep the config read-only beneath it.
func TestLandlockRefusesTheControlPlane(t *testing.T) {
	f := newFixture(t, newLandlock())
	svc := PolicyService{Settings: Settings{Mode: WorkspaceWrite, Workspace: f.ws, Home: f.home,
		StateDir: f.state, ConfigDir: filepath.Join(f.ws, ".config", "cordon")}}
	p, err := svc.Resolve(Request{TmpDir: f.tmp})
	require.NoError(t, err)
	cp, err := p.ToConfined()
	require.NoError(t, err)
	_, err = newLandlock().Confine([]string{"true"}, cp)
	var ue *UnavailableError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, ue.Reason, "config directory")
	assert.Contains(t, ue.Reason, "install bubblewrap")
	// Read-only mode writes nowhere: it still runs.
	out, code := f.sh(f.policyAt(f.ws, ReadOnly), `echo ok`)
	assert.Equal(t, 0, code, out)
	// bwrap keeps the config directory read-only beneath the workspace.
	_, err = newBwrap().Confine([]string{"true"}, cp)
	assert.NoError(t, err)
}

// TestLandlockReadDenyIsTheKernels: reads are granted around the
// read-deny list, so a command cannot read a credential even though the
// directory holding it is readable, and everything else stays readable.
func TestLandlockReadDenyIsTheKernels(t *testing.T) {
	f := newFixture(t, newLandlock())
	require.NoError(t, os.WriteFile(filepath.Join(f.home, ".bashrc"), []byte("# rc\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.state, "http-token"), []byte("TOKEN-CANARY\n"), 0o600))
	p := f.policy(ReadOnly, NetworkAllow)
	out, _ := f.sh(p, `cat "$1"; cat "$2"; cat "$3"/.bashrc; cat /etc/hostname >/dev/null && echo etc-ok`, f.secret, filepath.Join(f.state, "http-token"), f.home)
	assert.NotContains(t, out, "SECRET-CANARY")
	assert.NotContains(t, out, "TOKEN-CANARY")
	assert.Contains(t, out, "# rc")
	assert.Contains(t, out, "etc-ok")
	assert.Contains(t, out, "Permission denied")
	// The session tmp lies in the hidden state directory and stays usable.
	out, code := f.sh(p, `echo x > "$TMPDIR/t" && cat "$TMPDIR/t"`)
	assert.Equal(t, 0, code, out)
}

func (f *fixture) policyAt(ws string, mode Mode) ExecutionPolicy {
	f.t.Helper()
	svc := PolicyService{Settings: Settings{Mode: mode, Network: NetworkAllow, Workspace: ws, Home: f.home,
		StateDir: f.state, ConfigDir: filepath.Join(f.home, ".config", "cordon")}}
	p, err := svc.Resolve(Request{TmpDir: f.tmp, SessionID: "test"})
	require.NoError(f.t, err)
	return p
}

// processTree is a debugging aid for a failing lifetime test.
func processTree(token string) string {
	var b strings.Builder
	for _, pid := range processesWith(token) {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		fmt.Fprintf(&b, "%d %s\n", pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
	}
	return b.String()
}

// TestCommandCannotKillItsReaper: under Landlock the reaper is outside the
// command's domain, so the command cannot kill it to orphan its children
// to init.
func TestCommandCannotKillItsReaper(t *testing.T) {
	f := newFixture(t, newLandlock())
	token := fmt.Sprintf("cordon-reaper-%d", time.Now().UnixNano())
	out, code := f.run(f.policy(WorkspaceWrite, NetworkAllow), "bash", "-c",
		leavers(token)+"\nkill -9 $PPID 2>&1; echo still-here", token)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "Operation not permitted")
	assert.Contains(t, out, "still-here")
	assert.Empty(t, waitGone(token), "processes outlived the call:\n%s", processTree(token))
}

// TestOtherTerminalsAreUnreadable: a terminal of the user's outside the
// sandbox (the one the human types into) cannot be opened by a confined
// command, on either backend: under Landlock only the device files of
// bwrap's fresh /dev are granted. What the human types reaches its own
// reader, not the command. The command's own devices still work.
func TestOtherTerminalsAreUnreadable(t *testing.T) {
	master, slave, err := pty.Open()
	require.NoError(t, err)
	defer master.Close()
	defer slave.Close()
	for _, prov := range []Backend{newBwrap(), newLandlock()} {
		t.Run(prov.Name(), func(t *testing.T) {
			f := newFixture(t, prov)
			p := f.policy(WorkspaceWrite, NetworkAllow)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for range 20 { // typed while the command tries to read it
					master.Write([]byte("TYPED-CANARY\n"))
					time.Sleep(50 * time.Millisecond)
				}
			}()
			out, _ := f.sh(p, `timeout 2 cat "$1"; stty -F "$1" -echo && echo settings-changed;
				head -c 4 /dev/urandom | wc -c; echo x > /dev/null && head -c 3 /dev/zero | wc -c; echo devices-ok`, slave.Name())
			<-done
			assert.NotContains(t, out, "TYPED-CANARY", "the command read the human's terminal")
			assert.NotContains(t, out, "settings-changed", "the command changed the human's terminal")
			// On the host: the terminal still echoes, and what was typed is
			// still there for its own reader.
			tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
			require.NoError(t, err)
			assert.NotZero(t, tio.Lflag&unix.ECHO, "the human's terminal lost its echo")
			got := make(chan string, 1)
			go func() { // a read the slave's close ends, should nothing be left to read
				typed := make([]byte, 4096)
				n, _ := slave.Read(typed)
				got <- string(typed[:max(n, 0)])
			}()
			select {
			case typed := <-got:
				assert.Contains(t, typed, "TYPED-CANARY", "what the human typed was taken")
			case <-time.After(2 * time.Second):
				t.Error("what the human typed was taken: nothing is left for the terminal's own reader")
			}
			assert.Contains(t, out, "devices-ok")
			assert.Regexp(t, `(?m)^4\n3\ndevices-ok`, out)
		})
	}
}

// TestBwrapSandboxEndsWithCordon: under bwrap a reaper stays above bwrap,
// on a control pipe whose other end only cordon has: when it closes (the
// kernel closes it however cordon ends, SIGKILL included), every process
// of the sandbox is killed — whether or not bwrap's own --die-with-parent
// had been armed yet.
func TestBwrapSandboxEndsWithCordon(t *testing.T) {
	prov := newBwrap()
	f := newFixture(t, prov)
	token := fmt.Sprintf("cordon-bwrap-reaped-%d", time.Now().UnixNano())
	cp, err := f.policy(WorkspaceWrite, NetworkAllow).ToConfined()
	require.NoError(t, err)
	c, err := prov.Confine([]string{"bash", "-c", leavers(token) + "\nsleep 304; true", token}, cp)
	require.NoError(t, err)
	l, err := c.newLaunch()
	require.NoError(t, err)
	l.OwnGroup = true
	out := &tailWriter{max: 1 << 20}
	l.Cmd.Stdout, l.Cmd.Stderr, l.Cmd.Dir = out, out, f.ws
	require.NoError(t, l.Start())
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && !leaversRunning(token) {
		time.Sleep(20 * time.Millisecond)
	}
	require.True(t, leaversRunning(token), "the command should have started its processes: %s\n%s", out.String(), processTree(token))
	require.NotNil(t, l.control, "bwrap runs beneath a reaper")
	l.control.Close() // as the kernel does when cordon dies; nothing is killed by cordon
	assert.Empty(t, waitGone(token), "the sandbox outlived cordon's end:\n%s", processTree(token))
	l.Kill()
	l.Wait()
}
