package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What is particular to a warm sandbox under Landlock: there is no pid
// namespace, the zygote shares its commands' Landlock domain, and its
// rules hold the inodes they were built from.

// TestWarmLandlockRulesFollowTheHost: what the human changes on the host
// between two calls is seen by the second as a cold call sees it. The
// rules of a running sandbox name inodes, not paths: a directory granted
// when the sandbox started, moved to a read-deny path, would still be
// readable in it; a file made later beside a read-deny path, or a
// workspace made anew, would be refused.
func TestWarmLandlockRulesFollowTheHost(t *testing.T) {
	w := newWarmFixture(t, "landlock")
	ssh := filepath.Dir(w.secret)
	backup := filepath.Join(w.home, ".ssh-backup")
	require.NoError(t, os.Mkdir(backup, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(backup, "id_restored"), []byte("RESTORED-SECRET\n"), 0o600))
	p := w.policy(WorkspaceWrite, NetworkAllow)
	read := "cat " + filepath.Join(ssh, "id_restored") + " 2>&1; exit 0"

	_, out := w.run(t.Context(), p, "cat "+filepath.Join(backup, "id_restored"))
	require.Equal(t, "RESTORED-SECRET\n", out, "control: the backup is readable where it is")
	_, out = w.run(t.Context(), p, "cat "+w.secret+" 2>&1; exit 0")
	require.Contains(t, out, "Permission denied", "control: the read-deny path is refused")
	first := w.idle()
	require.Len(t, first, 1)

	// The human restores the backup: the directory the sandbox granted is
	// now at a read-deny path.
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
	later := filepath.Join(w.home, "made-later")
	require.NoError(t, os.WriteFile(later, []byte("LATER\n"), 0o644))
	_, out = w.run(t.Context(), p, "cat "+later)
	assert.Equal(t, "LATER\n", out, "a file the human made is readable, as in a cold call")

	// The workspace made anew: its old inode is what the rules name.
	require.NoError(t, os.RemoveAll(w.ws))
	require.NoError(t, os.Mkdir(w.ws, 0o755))
	res, out := w.run(t.Context(), p, "echo made > new.txt")
	assert.Equal(t, 0, res.ExitCode, out)
	got, err := os.ReadFile(filepath.Join(w.ws, "new.txt"))
	require.NoError(t, err, "the write into the new workspace was refused")
	assert.Equal(t, "made\n", string(got))

	// And while nothing changes, the sandbox is reused.
	before := w.idle()
	w.run(t.Context(), p, "true")
	assert.Equal(t, before, w.idle(), "an unchanged host keeps the sandbox")
}

// TestWarmLandlockZygoteIsOutOfReach: a command shares the zygote's
// Landlock domain, so it may signal it; it still cannot read or write it
// through /proc (it is not dumpable) nor trace it (seccomp). Signals it
// can handle it drops; one that kills or stops it ends no more than the
// call that sent it: the reaper outside kills everything the call left,
// and the next call gets a fresh sandbox.
func TestWarmLandlockZygoteIsOutOfReach(t *testing.T) {
	w := newWarmFixture(t, "landlock")
	p := w.policy(WorkspaceWrite, NetworkAllow)
	res, out := w.run(t.Context(), p, `
for pid in $$ $PPID; do
  for f in environ maps; do cat /proc/$pid/$f >/dev/null 2>&1 && echo "READ $pid $f"; done
  readlink /proc/$pid/fd/1 >/dev/null 2>&1 && echo "READ $pid fd"
  readlink /proc/$pid/cwd >/dev/null 2>&1 && echo "READ $pid cwd"
done
(exec 3</proc/self/mem) 2>/dev/null && echo "OPENED self mem"
(exec 3</proc/$PPID/mem) 2>/dev/null && echo "OPENED zygote mem"
echo "zygote=$PPID"
exit 0`)
	require.Equal(t, 0, res.ExitCode, out)
	m := regexp.MustCompile(`zygote=(\d+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	zygote := m[1]
	assert.Contains(t, out, "OPENED self mem", "control: a process opens its own memory")
	assert.NotContains(t, out, "OPENED zygote mem")
	for _, what := range []string{"READ %s environ", "READ %s maps", "READ %s fd", "READ %s cwd"} {
		assert.Contains(t, out, fmt.Sprintf(what, selfPid(out)), "control: the shell reaches its own")
		assert.NotContains(t, out, fmt.Sprintf(what, zygote), "the command reached the zygote")
	}
	first := w.idle()
	require.Len(t, first, 1)

	// Every signal it can handle, it drops: all but SIGKILL, SIGSTOP and
	// the two Go leaves to a C library (32, 34), which end it as SIGKILL
	// does, below.
	res, out = w.run(t.Context(), p, `
for sig in $(seq 1 8) $(seq 10 18) $(seq 20 31) 33 $(seq 35 64); do kill -s $sig $PPID 2>/dev/null; done
sleep 0.2
echo survived`)
	assert.Equal(t, "survived\n", out)
	assert.Equal(t, 0, res.ExitCode)
	again := w.idle()
	require.Len(t, again, 1)
	assert.Same(t, first[0], again[0], "the zygote outlived every signal it can handle")

	// Killed from inside, with daemons left behind.
	token := fmt.Sprintf("cordon-warm-zygote-killed-%d", time.Now().UnixNano())
	res, out = w.run(t.Context(), p, leavers(token)+"\nkill -9 $PPID; sleep 5; echo finished")
	assert.NotContains(t, out, "finished")
	assert.NotEqual(t, 0, res.ExitCode)
	assert.Empty(t, waitGone(token), "processes outlived the call:\n%s", processTree(token))
	res, out = w.run(t.Context(), p, "echo next")
	assert.Equal(t, "next\n", out)
	assert.Equal(t, 0, res.ExitCode)
	fresh := w.idle()
	require.Len(t, fresh, 1)
	assert.True(t, first[0] != fresh[0], "a killed zygote is never handed another call")

	// Stopped from inside: the call's timeout ends it, and everything in it.
	token = fmt.Sprintf("cordon-warm-zygote-stopped-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	res, out = w.run(ctx, p, leavers(token)+"\nkill -STOP $PPID; exit 0")
	assert.Contains(t, out, "started")
	assert.Equal(t, TimedOut, res.Ending)
	assert.Empty(t, waitGone(token), "processes outlived the call:\n%s", processTree(token))
	res, out = w.run(t.Context(), p, "echo next")
	assert.Equal(t, "next\n", out)
	assert.Equal(t, 0, res.ExitCode)
}
