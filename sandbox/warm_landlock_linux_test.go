package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What is particular to a warm sandbox under Landlock: there is no pid
// namespace, the zygote's commands run in Landlock domains beneath its
// own, and its rules hold the inodes they were built from.

// TestWarmLandlockRulesFollowTheHost: what the human changes on the host
// between two calls is seen by the second as a cold call sees it. The
// rules of a running sandbox name inodes, not paths: a directory granted
// when the sandbox started, moved to a read-deny path, would still be
// readable in it; a file made later beside a read-deny path, or a
// workspace made anew, would be refused.
//
// The zygote trusts the ctimes of the directories its rules list while
// they are older than two seconds when it looks (racyWindow in
// fingerprint_linux.go), and hashes their entries otherwise: the test
// runs once with each change made at once, and once with each made after
// the host has settled.
func TestWarmLandlockRulesFollowTheHost(t *testing.T) {
	t.Run("changes at once", func(t *testing.T) { testWarmLandlockRulesFollowTheHost(t, func() {}) })
	t.Run("changes after a while", func(t *testing.T) {
		testWarmLandlockRulesFollowTheHost(t, func() { time.Sleep(2200 * time.Millisecond) })
	})
}

func testWarmLandlockRulesFollowTheHost(t *testing.T, settle func()) {
	w := newWarmFixture(t, "landlock")
	ssh := filepath.Dir(w.secret)
	backup := filepath.Join(w.home, ".ssh-backup")
	require.NoError(t, os.Mkdir(backup, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(backup, "id_restored"), []byte("RESTORED-SECRET\n"), 0o600))
	p := w.policy(WorkspaceWrite, NetworkAllow)
	read := "cat " + filepath.Join(ssh, "id_restored") + " 2>&1; exit 0"
	settle()

	_, out := w.run(t.Context(), p, "cat "+filepath.Join(backup, "id_restored"))
	require.Equal(t, "RESTORED-SECRET\n", out, "control: the backup is readable where it is")
	_, out = w.run(t.Context(), p, "cat "+w.secret+" 2>&1; exit 0")
	require.Contains(t, out, "Permission denied", "control: the read-deny path is refused")
	first := w.idle()
	require.Len(t, first, 1)

	// The human restores the backup: the directory the sandbox granted is
	// now at a read-deny path.
	settle()
	require.NoError(t, os.Rename(ssh, ssh+".old"))
	require.NoError(t, os.Rename(backup, ssh))
	_, out = w.run(t.Context(), p, read)
	assert.NotContains(t, out, "RESTORED-SECRET", "the warm call read a read-deny path")
	assert.Contains(t, out, "Permission denied")
	var cold bytes.Buffer
	_, err := w.cold().Run(t.Context(), p, RunSpec{Argv: []string{"bash", "-c", read}, Dir: p.WorkspaceRoot,
		Env: Environ(os.Environ(), nil), Stdout: &cold, Stderr: &cold})
	require.NoError(t, err)
	assert.Equal(t, cold.String(), out, "warm and cold calls see the same")
	second := w.idle()
	require.Len(t, second, 1)
	assert.True(t, first[0] != second[0], "the stale sandbox was not reused")

	// A file made beside a read-deny path after the sandbox started.
	settle()
	later := filepath.Join(w.home, "made-later")
	require.NoError(t, os.WriteFile(later, []byte("LATER\n"), 0o644))
	_, out = w.run(t.Context(), p, "cat "+later)
	assert.Equal(t, "LATER\n", out, "a file the human made is readable, as in a cold call")

	// The workspace made anew: its old inode is what the rules name.
	settle()
	require.NoError(t, os.RemoveAll(w.ws))
	require.NoError(t, os.Mkdir(w.ws, 0o755))
	res, out := w.run(t.Context(), p, "echo made > new.txt")
	assert.Equal(t, 0, res.ExitCode, out)
	got, err := os.ReadFile(filepath.Join(w.ws, "new.txt"))
	require.NoError(t, err, "the write into the new workspace was refused")
	assert.Equal(t, "made\n", string(got))

	// And while nothing changes, the sandbox is reused.
	assert.True(t, w.keeps(func() { w.run(t.Context(), p, "true") }), "an unchanged host keeps the sandbox")
}

// TestWarmLandlockZygoteIsOutOfReach: each command runs in a Landlock
// domain of its own beneath the zygote's, so it can neither signal the
// zygote nor read or write it through /proc (nor trace it: seccomp). Its
// kill(-1) reaches its own processes only, and its script goes on, as a
// cold call's does. A zygote killed from outside (the OOM killer) ends its
// call, and nothing the call started outlives it; a stopped one ends with
// the call's timeout.
func TestWarmLandlockZygoteIsOutOfReach(t *testing.T) {
	w := newWarmFixture(t, "landlock")
	p := w.policy(WorkspaceWrite, NetworkAllow)
	w.assertZygoteProcRefused(t, p, "$PPID")
	first := w.idle()
	require.Len(t, first, 1)

	// The zygote is alive when a signal to it is refused (EPERM), gone
	// when there is no such process. (Whether the next call gets the same
	// sandbox depends on the host too: a file made beside a read-deny path
	// by another test ends it, by its fingerprint.)
	const zygoteAlive = `kill -0 $PPID 2>&1 | grep -q 'not permitted' && echo "zygote alive"`
	_, out := w.run(t.Context(), p, "echo $PPID")
	zygotePid, err := strconv.Atoi(strings.TrimSpace(out))
	require.NoError(t, err, out)
	// And from the host: the same process, still the zygote.
	aliveOnHost := func(what string) {
		t.Helper()
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", zygotePid))
		assert.NoError(t, err, "the zygote is gone from the host's process table after %s", what)
		assert.Contains(t, string(cmdline), "--zygote-serve", "pid %d is no longer the zygote after %s", zygotePid, what)
	}
	res, out := w.run(t.Context(), p, `refused=0
for sig in $(seq 1 64); do kill -s $sig $PPID 2>/dev/null || refused=$((refused+1)); done
echo "refused $refused of 64"
sleep 0.1; `+zygoteAlive)
	assert.Equal(t, "refused 64 of 64\nzygote alive\n", out, "a command signalled its zygote")
	assert.Equal(t, 0, res.ExitCode)
	aliveOnHost("its commands' signals")
	// No thread of the zygote is left in a command's domain once the
	// command runs: not the one that forked it, nor its main thread,
	// which Go never ends (a zygote that forked from its main thread
	// left it there, and every later command could kill the zygote). A
	// signal to a thread id is judged by that thread's domain. Several
	// calls, since which thread forks is the Go scheduler's choice.
	for i := range 4 {
		_, out := w.run(t.Context(), p, `sleep 0.2; reachable=0
for task in /proc/$PPID/task/*; do kill -0 "${task##*/}" 2>/dev/null && reachable=$((reachable+1)); done
echo "reachable $reachable"`)
		assert.Equal(t, "reachable 0\n", out, "call %d reached a thread of its zygote", i)
	}

	token := fmt.Sprintf("cordon-warm-kill-all-%d", time.Now().UnixNano())
	res, out = w.run(t.Context(), p, leavers(token)+`
sleep 300 & mine=$!
kill -9 -1
wait $mine; echo "own process: $?"
sleep 0.1; `+zygoteAlive+`
echo "the script goes on"`)
	assert.Contains(t, out, "own process: 137\n", "kill(-1) reaches the command's own processes")
	assert.Contains(t, out, "zygote alive\n", "the zygote outlived its commands' kill(-1)")
	assert.True(t, strings.HasSuffix(out, "the script goes on\n"), "kill(-1) ended the script:\n%s", out)
	aliveOnHost("its command's kill(-1)")
	assert.Equal(t, 0, res.ExitCode)
	assert.Empty(t, waitGone(token), "processes outlived the call:\n%s", processTree(token))

	// Killed from outside, with daemons left behind.
	token = fmt.Sprintf("cordon-warm-zygote-killed-%d", time.Now().UnixNano())
	zygote := signalZygote(t, p, syscall.SIGKILL)
	res, out = w.run(t.Context(), p, leavers(token)+"\n"+zygote+"; sleep 5; echo finished")
	assert.NotContains(t, out, "finished")
	assert.NotEqual(t, 0, res.ExitCode)
	assert.Empty(t, waitGone(token), "processes outlived the call:\n%s", processTree(token))
	res, out = w.run(t.Context(), p, "echo next")
	assert.Equal(t, "next\n", out)
	assert.Equal(t, 0, res.ExitCode)
	fresh := w.idle()
	require.Len(t, fresh, 1)
	assert.True(t, first[0] != fresh[0], "a killed zygote is never handed another call")

	// Stopped from outside: the call's timeout ends it, and everything in it.
	token = fmt.Sprintf("cordon-warm-zygote-stopped-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	zygote = signalZygote(t, p, syscall.SIGSTOP)
	res, out = w.run(ctx, p, leavers(token)+"\n"+zygote+"; exit 0")
	assert.Contains(t, out, "started")
	assert.Equal(t, TimedOut, res.Ending)
	assert.Empty(t, waitGone(token), "processes outlived the call:\n%s", processTree(token))
	res, out = w.run(t.Context(), p, "echo next")
	assert.Equal(t, "next\n", out)
	assert.Equal(t, 0, res.ExitCode)
}

// signalZygote sends sig, from the host, to the zygote of the call whose
// script runs the line it returns: that line writes the zygote's pid (the
// command's parent) to a file in p's workspace, which the host watches. As
// the kernel's OOM killer, or a human, would: no command can.
func signalZygote(t *testing.T, p ExecutionPolicy, sig syscall.Signal) string {
	file := filepath.Join(p.WorkspaceRoot, fmt.Sprintf("zygote-%d", time.Now().UnixNano()))
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			data, err := os.ReadFile(file)
			if err != nil || !bytes.HasSuffix(data, []byte("\n")) {
				continue
			}
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 1 {
				assert.NoError(t, syscall.Kill(pid, sig), "signalling the zygote")
			}
			return
		}
		t.Errorf("the call never wrote its zygote's pid to %s", file)
	}()
	t.Cleanup(func() { <-sent })
	return fmt.Sprintf("echo $PPID > %q; sleep 0.5", file)
}

// deepTree is a script that starts a chain of depth processes, each the
// child of the one before, whose exits are slow (each holds a large
// descriptor table). Each asks to be told when its parent dies
// (PR_SET_PDEATHSIG) and then appends a line to witness: a process that
// lives on after its parent is gone could run anything. It returns once
// the chain's last process is up.
func deepTree(token, witness string, depth int) string {
	return fmt.Sprintf(`python3 - %[1]s <<'PY' &
import ctypes, os, resource, signal, sys, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
base = os.open('/dev/null', os.O_RDONLY)
for _ in range(min(hard, 1 << 16) - 64):
    os.dup(base)
out = os.open(%[2]q, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
libc = ctypes.CDLL(None)
for level in range(%[3]d):
    if os.fork():
        break
    signal.signal(signal.SIGUSR1, lambda *_: os.write(out, b'%%d outlived its parent\n' %% level))
    libc.prctl(1, signal.SIGUSR1)  # PR_SET_PDEATHSIG
else:
    open(%[2]q + '.ready', 'w').close()
while True:
    time.sleep(1)
PY
while [ ! -e %[2]q.ready ]; do sleep 0.01; done
echo tree-up`, token, witness, depth)
}

// TestLandlockDeepTreeDiesAtOnce: however the call ends, every process of
// a deep tree is killed in one sweep — none lives on after its parent is
// gone, and none outlives the call. Killed one level per reap, the lower
// levels of a tree slow to exit ran on while the upper ones exited, past
// the time cordon gives the reaper. The zygote's kill(-1) reaches its own
// domain only: a process of the user's, and another policy's sandbox,
// live on.
func TestLandlockDeepTreeDiesAtOnce(t *testing.T) {
	w := newWarmFixture(t, "landlock")
	p := w.policy(WorkspaceWrite, NetworkAllow)
	bystander := exec.Command("sleep", "300")
	require.NoError(t, bystander.Start())
	t.Cleanup(func() { bystander.Process.Kill(); bystander.Wait() })
	readOnly := w.policy(ReadOnly, NetworkAllow)
	w.run(t.Context(), readOnly, "true")
	other := w.idle()
	require.Len(t, other, 1)
	t.Cleanup(func() {
		assert.NoError(t, bystander.Process.Signal(syscall.Signal(0)), "the zygote killed a process of the user's")
		assert.Contains(t, w.idle(), other[0], "the zygote killed another policy's sandbox")
	})
	for _, c := range []callEnding{
		{"warm, the command exits", "exit 0", w.ex, 0, 0},
		{"warm, the zygote killed", "sleep 30", w.ex, 0, syscall.SIGKILL},
		{"warm, the zygote stopped", "sleep 30", w.ex, 10 * time.Second, syscall.SIGSTOP},
		{"cold, the call timed out", "sleep 30", w.cold(), 10 * time.Second, 0},
		{"cold, the command exits", "exit 0", w.cold(), 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			token := fmt.Sprintf("cordon-deep-tree-%d", time.Now().UnixNano())
			witness := filepath.Join(w.ws, token)
			out, err := c.run(t, p, deepTree(token, witness, 8))
			require.NoError(t, err)
			require.Contains(t, out, "tree-up")
			assert.Empty(t, processesWith(token), "processes outlived the call:\n%s", processTree(token))
			time.Sleep(200 * time.Millisecond)
			seen, _ := os.ReadFile(witness)
			assert.Empty(t, string(seen), "a process of the tree ran on after its parent was gone")
		})
	}
}

// hoppers is a script that starts chains processes that never sit still:
// each, in a loop, resumes its process group (undoing a stop), forks and
// exits, so that its pid changes and its child is handed to the reaper —
// a tree that outruns a walk of /proc. Each chain is a process group of
// its own, whose id it writes to groups, one a line.
func hoppers(token, groups string, chains int) string {
	return fmt.Sprintf(`perl -e '
use POSIX ();
$SIG{HUP} = "IGNORE";
for (2 .. $ARGV[2]) { last unless fork }
POSIX::setpgid(0, 0);
open(my $out, ">>", $ARGV[1]) or die;
print $out getpgrp(), "\n";
close $out;
while (1) {
    kill "CONT", -getpgrp();
    POSIX::_exit(0) if fork;
}' %[1]s %[2]q %[3]d &
until [ "$(wc -l < %[2]q 2>/dev/null)" = %[3]d ]; do sleep 0.01; done
echo hopping`, token, groups, chains)
}

// TestLandlockHoppingTreeDies: a tree that forks and exits faster than any
// walk of /proc can follow dies with its call, warm or cold, however the
// call ends: the warden's kill(-1) reaches it whole.
func TestLandlockHoppingTreeDies(t *testing.T) {
	const chains = 32
	w := newWarmFixture(t, "landlock")
	p := w.policy(WorkspaceWrite, NetworkAllow)
	for _, c := range []callEnding{
		{"warm, the command exits", "exit 0", w.ex, 0, 0},
		{"warm, the zygote killed", "sleep 30", w.ex, 0, syscall.SIGKILL},
		{"cold, the command exits", "exit 0", w.cold(), 0, 0},
		// Long enough for the chains to start on a busy machine.
		{"cold, the call timed out", "sleep 60", w.cold(), 20 * time.Second, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			token := fmt.Sprintf("cordon-hopper-%d", time.Now().UnixNano())
			groupsFile := filepath.Join(w.ws, token)
			out, err := c.run(t, p, hoppers(token, groupsFile, chains))
			data, _ := os.ReadFile(groupsFile)
			var groups []int
			for _, f := range strings.Fields(string(data)) {
				if g, err := strconv.Atoi(f); err == nil && g > 1 {
					groups = append(groups, g)
				}
			}
			t.Cleanup(func() { killGroups(groups) })
			require.NoError(t, err)
			require.Contains(t, out, "hopping")
			require.Len(t, groups, chains)
			for _, g := range groups {
				// A zombie counts: every process of the call is reaped
				// before it returns.
				assert.ErrorIs(t, syscall.Kill(-g, 0), syscall.ESRCH, "process group %d outlived the call", g)
			}
		})
	}
}

// killGroups kills what a failed test left of the hoppers' groups: a
// hopper's pid changes faster than a scan of /proc can follow, but its
// group stays.
func killGroups(groups []int) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		left := false
		for _, g := range groups {
			if syscall.Kill(-g, syscall.SIGKILL) == nil {
				left = true
			}
		}
		if !left {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// callEnding is a way for a call to end: the script's last line, run
// warm or cold, with a timeout or none, and with a signal the host sends
// the zygote (signalZygote) before that line, or none.
type callEnding struct {
	name, end string
	ex        *Executor
	timeout   time.Duration
	zygote    syscall.Signal
}

// run runs start, then the ending, in bash under p, and returns the output.
func (c callEnding) run(t *testing.T, p ExecutionPolicy, start string) (string, error) {
	ctx := t.Context()
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	end := c.end
	if c.zygote != 0 {
		end = signalZygote(t, p, c.zygote) + "\n" + end
	}
	var out bytes.Buffer
	_, err := c.ex.Run(ctx, p, RunSpec{Argv: []string{"bash", "-c", start + "\n" + end},
		Dir: p.WorkspaceRoot, Env: Environ(os.Environ(), nil), Stdout: &out, Stderr: &out, OwnGroup: true, WaitDelay: 2 * time.Second})
	return out.String(), err
}
