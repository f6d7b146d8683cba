package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/helper"
	"github.com/cordonhq/cordon/sandbox/internal/guard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The warm sandbox (warm_linux.go, docs/warm-sandbox.md) against what a
// command inside tries: every test runs its calls through an executor that
// keeps sandboxes warm, as the server's does, on each backend that has
// them unless the test is about one.

type warmFixture struct {
	*fixture
	backend string
	ex      *Executor
}

func newWarmFixture(t *testing.T, backend string) *warmFixture {
	prov := map[string]func() Backend{"bwrap": newBwrap, "landlock": newLandlock}[backend]()
	if res := probeBackend(prov, ""); !res.OK {
		t.Fatalf("%s must work on this machine: %s", backend, res.Reason)
	}
	ex := &Executor{Backends: &Backends{Forced: backend}, Requirement: Required, Warm: true}
	t.Cleanup(ex.Close)
	return &warmFixture{fixture: newFixture(t, prov), backend: backend, ex: ex}
}

// eachWarmBackend runs test on every backend with warm sandboxes.
func eachWarmBackend(t *testing.T, test func(t *testing.T, w *warmFixture)) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) { test(t, newWarmFixture(t, backend)) })
	}
}

// cold is an executor that runs every call cold on w's backend.
func (w *warmFixture) cold() *Executor {
	return &Executor{Backends: &Backends{Forced: w.backend}, Requirement: Required}
}

// run runs script in bash -c under p, as the bash tool does.
func (w *warmFixture) run(ctx context.Context, p ExecutionPolicy, script string) (RunResult, string) {
	w.t.Helper()
	var out bytes.Buffer
	res, err := w.ex.Run(ctx, p, RunSpec{Argv: []string{"bash", "-c", script}, Dir: p.WorkspaceRoot,
		Env: Environ(os.Environ(), nil), Stdout: &out, Stderr: &out, OwnGroup: true, WaitDelay: 2 * time.Second})
	require.NoError(w.t, err)
	return res, out.String()
}

// keeps reports whether call, run with one sandbox idle, leaves that same
// sandbox idle after it. Under Landlock a sandbox also ends, rightly, when
// a directory on the way to a read-deny entry changes (its fingerprint),
// and /var/tmp and the tests' shared root are such directories, where
// tests running beside this one make theirs: a quiet moment gets a few
// tries. (Compared by identity: the sandboxes are live processes.)
func (w *warmFixture) keeps(call func()) bool {
	for try := 0; try < 5; try++ {
		before := w.idle()
		call()
		after := w.idle()
		if len(before) == 1 && len(after) == 1 && before[0] == after[0] {
			return true
		}
	}
	return false
}

// warmUp runs a call under p so that one sandbox is warm and idle, and
// returns the idle sandboxes.
func (w *warmFixture) warmUp(p ExecutionPolicy) []*zygoteProc {
	w.t.Helper()
	w.run(w.t.Context(), p, "true")
	idle := w.idle()
	require.Len(w.t, idle, 1)
	return idle
}

// idle is the executor's idle warm sandboxes.
func (w *warmFixture) idle() []*zygoteProc {
	w.ex.warm.mu.Lock()
	defer w.ex.warm.mu.Unlock()
	return append([]*zygoteProc(nil), w.ex.warm.idle...)
}

// TestWarmSandboxIsReusedWhileThePolicyHolds: calls under one policy share
// one sandbox, whose commands are the zygote's children; another policy
// gets a sandbox of its own.
func TestWarmSandboxIsReusedWhileThePolicyHolds(t *testing.T) {
	eachWarmBackend(t, testWarmSandboxIsReusedWhileThePolicyHolds)
}

func testWarmSandboxIsReusedWhileThePolicyHolds(t *testing.T, w *warmFixture) {
	p := w.policy(WorkspaceWrite, NetworkDeny)
	res, out := w.run(t.Context(), p, `echo "parent=$PPID grandparent=$(awk '/^PPid/ {print $2}' /proc/$PPID/status)"; echo hi >> file.txt`)
	require.Equal(t, Exited, res.Ending, out)
	first := w.idle()
	require.Len(t, first, 1)
	if w.backend == "bwrap" {
		assert.Equal(t, "parent=1 grandparent=0\n", out, "the command is the zygote's child (the namespace's init)")
	} else {
		// The zygote's parent is the reaper, outside the sandbox.
		assert.Regexp(t, fmt.Sprintf(`^parent=\d+ grandparent=%d\n$`, first[0].cmd.Process.Pid), out)
	}
	assert.True(t, w.keeps(func() {
		res, out := w.run(t.Context(), p, `echo "parent=$PPID"; exit 3`)
		assert.Equal(t, 3, res.ExitCode, out)
	}), "the second call ran in the first one's sandbox")
	data, _ := os.ReadFile(w.wsFile)
	assert.Equal(t, "inside\nhi\n", string(data), "a write in the workspace lands")

	res, out = w.run(t.Context(), w.policy(ReadOnly, NetworkDeny), `echo hi >> file.txt`)
	assert.NotEqual(t, 0, res.ExitCode, out)
	data, _ = os.ReadFile(w.wsFile)
	assert.Equal(t, "inside\nhi\n", string(data), "read-only refuses the write, warm as cold")
	assert.Len(t, w.idle(), 2, "a sandbox per policy")
}

// TestWarmNoProcessOutlivesItsCall: what a command leaves behind is gone
// when the call returns — from the host's process table, and from the
// sandbox the next call runs in.
func TestWarmNoProcessOutlivesItsCall(t *testing.T) {
	eachWarmBackend(t, testWarmNoProcessOutlivesItsCall)
}

func testWarmNoProcessOutlivesItsCall(t *testing.T, w *warmFixture) {
	p := w.policy(WorkspaceWrite, NetworkAllow)
	token := fmt.Sprintf("cordon-warm-leaver-%d", time.Now().UnixNano())
	res, out := w.run(t.Context(), p, leavers(token)+"\nsleep 0.3")
	require.Equal(t, 0, res.ExitCode, out)
	assert.Contains(t, out, "started")
	assert.Empty(t, waitGone(token), "processes outlived the call:\n%s", processTree(token))
	// The zygote has no child left but this shell.
	_, out = w.run(t.Context(), p, `echo $(cat /proc/$PPID/task/*/children 2>/dev/null) $$`)
	pids := strings.Fields(out)
	require.Len(t, pids, 2, out)
	assert.Equal(t, pids[1], pids[0], "the next call's sandbox holds nothing of the last")
	if w.backend == "bwrap" {
		// Inside, nothing is left but the zygote (pid 1) and this shell.
		_, out = w.run(t.Context(), p, `for d in /proc/[0-9]*; do echo "${d#/proc/}"; done`)
		assert.Equal(t, []string{"1"}, withoutSelf(out), "the next call's sandbox holds nothing of the last")
	}
	require.Len(t, w.idle(), 1)
}

// withoutSelf drops the listing shell (the last, highest pid) from a list
// of pids.
func withoutSelf(out string) []string {
	pids := strings.Fields(out)
	if len(pids) > 0 {
		pids = pids[:len(pids)-1]
	}
	return pids
}

// TestWarmKillEndsTheWholeTree: a call that times out takes everything
// it started with it, and the sandbox serves the next call.
func TestWarmKillEndsTheWholeTree(t *testing.T) { eachWarmBackend(t, testWarmKillEndsTheWholeTree) }

func testWarmKillEndsTheWholeTree(t *testing.T, w *warmFixture) {
	p := w.policy(WorkspaceWrite, NetworkAllow)
	w.run(t.Context(), p, "true") // warm
	token := fmt.Sprintf("cordon-warm-killed-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	res, out := w.run(ctx, p, leavers(token)+"\nsleep 304; true")
	assert.Equal(t, TimedOut, res.Ending, out)
	assert.Empty(t, waitGone(token), "processes outlived the kill:\n%s", processTree(token))
	res, out = w.run(t.Context(), p, "echo after")
	assert.Equal(t, "after\n", out)
	assert.Equal(t, 0, res.ExitCode)
}

// TestWarmZygoteIsOutOfReach: a command can neither read nor write the
// zygote through /proc (it is not dumpable), nor kill it (it is the
// namespace's init and ignores every signal it could be sent).
func TestWarmZygoteIsOutOfReach(t *testing.T) {
	w := newWarmFixture(t, "bwrap")
	p := w.policy(WorkspaceWrite, NetworkAllow)
	w.assertZygoteProcRefused(t, p, "1")
	before := w.idle()
	require.Len(t, before, 1)

	// Every signal a command can send, to its parent and to everyone; and
	// queued ones, whose sender picks the si_code, which Go's runtime
	// would take for faults of its own (the filter refuses them).
	w.assertZygoteSurvives(t, p, `
for sig in $(seq 1 31) $(seq 34 64); do kill -s $sig $PPID 2>/dev/null; done
kill -9 -1 2>/dev/null; kill -STOP 1
python3 - <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for sig in (4, 5, 7, 8, 11, 31):
    libc.sigqueue(1, sig, ctypes.c_void_p(0))
info = (ctypes.c_int * 32)()
info[0], info[2] = 11, -1  # si_signo SIGSEGV, si_code SI_QUEUE
libc.syscall(424, os.pidfd_open(1), 11, info, 0)  # pidfd_send_signal
PY`, before[0])
	res, out := w.run(t.Context(), p, "echo next")
	assert.Equal(t, "next\n", out)
	assert.Equal(t, 0, res.ExitCode)
}

// TestWarmSandboxFollowsRepositories: a command that moves a repository
// away and makes a new one where it was cannot leave the new one's hooks
// writable for the next call: the next call runs in a sandbox that
// protects them (or is refused), and the human's hook directory holds
// nothing the command wrote.
func TestWarmSandboxFollowsRepositories(t *testing.T) {
	eachWarmBackend(t, testWarmSandboxFollowsRepositories)
}

func testWarmSandboxFollowsRepositories(t *testing.T, w *warmFixture) {
	repo := filepath.Join(w.ws, "sub")
	require.NoError(t, os.MkdirAll(repo, 0o755))
	gitHost(t, repo, "init", "-q")
	p := w.policy(WorkspaceWrite, NetworkAllow)
	w.run(t.Context(), p, "true")
	_, out := w.run(t.Context(), p, `mv sub sub2 && mkdir -p sub && cd sub && git init -q . && ls .git/hooks >/dev/null; echo moved`)
	require.Contains(t, out, "moved")
	p = w.policy(WorkspaceWrite, NetworkAllow)
	w.run(t.Context(), p, `printf '#!/bin/sh\necho PWNED\n' > sub/.git/hooks/pre-commit; chmod +x sub/.git/hooks/pre-commit`)
	for _, r := range []string{filepath.Join(w.ws, "sub"), filepath.Join(w.ws, "sub2")} {
		_, err := os.Stat(filepath.Join(r, ".git", "hooks", "pre-commit"))
		assert.True(t, os.IsNotExist(err), "%s: a hook the command planted is on the host", r)
	}
}

// TestWarmHumansNextGitRunsNothingPlanted is the persistence suite's git
// attack through a warm sandbox, planted in a call that reuses it.
func TestWarmHumansNextGitRunsNothingPlanted(t *testing.T) {
	eachWarmBackend(t, testWarmHumansNextGitRunsNothingPlanted)
}

func testWarmHumansNextGitRunsNothingPlanted(t *testing.T, w *warmFixture) {
	gitWorld(t, w.fixture)
	p := w.policy(WorkspaceWrite, NetworkAllow)
	w.run(t.Context(), p, "true")
	res, out := w.run(t.Context(), p, plantScript(w.ws, w.outside, plants))
	require.Len(t, w.idle(), 1)
	assert.Empty(t, canaries(t, w.outside), "nothing ran while confined")
	humanGit(t, w.ws)
	assert.Empty(t, canaries(t, w.outside), "the human's git ran a planted payload; command output:\n%s\nundone: %v", out, res.Undone)
	assert.NotEmpty(t, res.Undone, "the result says what was undone")
}

// selfPid is the pid in the control lines of TestWarmZygoteIsOutOfReach.
func selfPid(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[1] != "1" {
			return f[1]
		}
	}
	return "?"
}

// TestWarmCallsShareWhatColdCallsShare: what a cold call's namespaces take
// with them (SysV IPC objects) is gone before the next warm call, and
// /dev/shm is no more writable than it is cold.
func TestWarmCallsShareWhatColdCallsShare(t *testing.T) {
	w := newWarmFixture(t, "bwrap") // Landlock refuses SysV IPC, warm as cold
	p := w.policy(WorkspaceWrite, NetworkAllow)
	_, out := w.run(t.Context(), p, `ipcmk -M 4096 && ipcmk -S 1 && ipcmk -Q && echo made; touch /dev/shm/left 2>/dev/null && echo shm-written; exit 0`)
	require.Contains(t, out, "made")
	assert.NotContains(t, out, "shm-written")
	res, out := w.run(t.Context(), p, `ipcs -m -s -q | grep -c '^0x' || true; ls -A /dev/shm`)
	require.Equal(t, 0, res.ExitCode, out)
	assert.Equal(t, "0\n", out, "the last call's IPC objects and files are gone")
	require.Len(t, w.idle(), 1, "both calls ran in one sandbox")
}

// TestWarmCommandsGetTheSignalsColdOnesGet: the zygote drops every signal
// sent to it, yet its commands start with the dispositions a cold one has,
// a fresh process's: SIGTERM ends a shell, SIGPIPE ends a writer whose
// reader left, and nothing cordon's ancestry ignored (here SIGHUP, as
// nohup does) stays ignored.
func TestWarmCommandsGetTheSignalsColdOnesGet(t *testing.T) {
	signal.Ignore(syscall.SIGHUP)
	t.Cleanup(func() { signal.Reset(syscall.SIGHUP) })
	eachWarmBackend(t, testWarmCommandsGetTheSignalsColdOnesGet)
}

func testWarmCommandsGetTheSignalsColdOnesGet(t *testing.T, w *warmFixture) {
	p := w.policy(WorkspaceWrite, NetworkAllow)
	const script = `grep SigIgn /proc/self/status
{ bash -c 'kill -TERM $$; echo survived'; } 2>/dev/null; echo "term=$?"
yes | head -c1 >/dev/null; echo "pipe=${PIPESTATUS[0]}"`
	var coldOut bytes.Buffer
	_, err := w.cold().Run(t.Context(), p, RunSpec{Argv: []string{"bash", "-c", script}, Dir: p.WorkspaceRoot,
		Env: Environ(os.Environ(), nil), Stdout: &coldOut, Stderr: &coldOut, OwnGroup: true})
	require.NoError(t, err)
	require.Equal(t, "SigIgn:\t0000000000000000\nterm=143\npipe=141\n", coldOut.String(), "control: a cold command")
	_, out := w.run(t.Context(), p, script)
	require.Len(t, w.idle(), 1, "the call ran warm")
	assert.Equal(t, coldOut.String(), out, "a warm command's signals are a cold one's")
}

// TestWarmSandboxThatEndsIsNotReused: a sandbox that ended between calls,
// or during one (here killed from the host), is never handed a call again;
// the call it was running ends, and the next one gets a fresh sandbox.
func TestWarmSandboxThatEndsIsNotReused(t *testing.T) {
	eachWarmBackend(t, testWarmSandboxThatEndsIsNotReused)
}

func testWarmSandboxThatEndsIsNotReused(t *testing.T, w *warmFixture) {
	p := w.policy(WorkspaceWrite, NetworkAllow)
	idle := w.warmUp(p)
	idle[0].kill()
	res, out := w.run(t.Context(), p, "echo between")
	assert.Equal(t, "between\n", out)
	assert.Equal(t, 0, res.ExitCode)
	idle = w.idle()
	require.Len(t, idle, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		idle[0].kill()
	}()
	res, out = w.run(t.Context(), p, "sleep 30; echo finished")
	assert.NotContains(t, out, "finished")
	assert.NotEqual(t, 0, res.ExitCode)
	res, out = w.run(t.Context(), p, "echo after")
	assert.Equal(t, "after\n", out)
	assert.Equal(t, 0, res.ExitCode)
	for _, z := range w.idle() {
		assert.NotSame(t, idle[0], z)
	}
}

// TestWarmZygoteIsConfinedWholly: every thread of the zygote is as
// confined as a command — no capabilities, the seccomp filter,
// no_new_privs — not only the one that forks the commands (confinement
// is per thread; the Go runtime has several).
func TestWarmZygoteIsConfinedWholly(t *testing.T) { eachWarmBackend(t, testWarmZygoteIsConfinedWholly) }

func testWarmZygoteIsConfinedWholly(t *testing.T, w *warmFixture) {
	p := w.policy(WorkspaceWrite, NetworkAllow)
	// A Go runtime thread may end between the glob and the read; only the
	// threads still there are judged.
	res, out := w.run(t.Context(), p, `for s in /proc/$PPID/task/*/status; do l=$(grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):' $s 2>/dev/null) && echo "$l" | tr -s '\t\n' '  ' && echo; done`)
	require.Equal(t, 0, res.ExitCode, out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Greater(t, len(lines), 1, "the zygote has several threads: %s", out)
	// The bounding set is emptied where the helper holds CAP_SETPCAP (as
	// root, or in bwrap's user namespace); elsewhere it stays the user's,
	// which grants nothing with no_new_privs and no permitted set.
	bnd := "0000000000000000"
	if w.backend == "landlock" && os.Geteuid() != 0 {
		bnd = ownCapBnd(t)
	}
	for _, line := range lines {
		assert.Equal(t, "CapPrm: 0000000000000000 CapEff: 0000000000000000 CapBnd: "+bnd+" NoNewPrivs: 1 Seccomp: 2", strings.TrimSpace(line))
	}
}

// ownCapBnd is this process's capability bounding set, as /proc shows it.
func ownCapBnd(t *testing.T) string {
	data, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^CapBnd:\s*(\S+)$`).FindSubmatch(data)
	require.NotNil(t, m)
	return string(m[1])
}

// TestWarmCallThatCannotStartRunsCold: a command the zygote cannot start
// (its directory is gone) fails as a cold start fails, and the sandbox
// serves on; a call too large for one request runs cold and leaves the
// sandbox be.
func TestWarmCallThatCannotStartRunsCold(t *testing.T) {
	eachWarmBackend(t, testWarmCallThatCannotStartRunsCold)
}

func testWarmCallThatCannotStartRunsCold(t *testing.T, w *warmFixture) {
	p := w.policy(WorkspaceWrite, NetworkAllow)
	w.warmUp(p)
	_, err := w.ex.Run(t.Context(), p, RunSpec{Argv: []string{"true"}, Dir: filepath.Join(w.ws, "gone"), Env: Environ(os.Environ(), nil)})
	require.Error(t, err, "a command that cannot start is an error, warm as cold")
	_, coldErr := w.cold().Run(t.Context(), p, RunSpec{Argv: []string{"true"}, Dir: filepath.Join(w.ws, "gone"), Env: Environ(os.Environ(), nil)})
	require.Error(t, coldErr)
	assert.Equal(t, coldErr.Error(), err.Error())

	big := strings.Repeat("x", 100<<10) // twice: more than one request holds, less than exec takes
	assert.True(t, w.keeps(func() {
		var out bytes.Buffer
		res, err := w.ex.Run(t.Context(), p, RunSpec{Argv: []string{"bash", "-c", `echo $(( ${#BIG1} + ${#BIG2} ))`}, Dir: w.ws,
			Env: append(Environ(os.Environ(), nil), "BIG1="+big, "BIG2="+big), Stdout: &out, Stderr: &out})
		require.NoError(t, err)
		assert.Equal(t, 0, res.ExitCode)
		assert.Equal(t, fmt.Sprintf("%d\n", 200<<10), out.String())
	}), "the sandbox served on")
}

// assertZygoteProcRefused: a command can neither read nor write the zygote
// (whose pid the shell expression zygote gives) through /proc: it is not
// dumpable. Each probe runs first on the shell itself, the control.
func (w *warmFixture) assertZygoteProcRefused(t *testing.T, p ExecutionPolicy, zygote string) {
	t.Helper()
	res, out := w.run(t.Context(), p, fmt.Sprintf(`z=%s
for pid in $$ $z; do
  for f in environ maps; do cat /proc/$pid/$f >/dev/null 2>&1 && echo "READ $pid $f"; done
  readlink /proc/$pid/fd/1 >/dev/null 2>&1 && echo "READ $pid fd"
  readlink /proc/$pid/cwd >/dev/null 2>&1 && echo "READ $pid cwd"
done
# Memory is opened by the shell itself for the control (Yama may refuse
# a parent's).
(exec 3</proc/self/mem) 2>/dev/null && echo "OPENED self mem"
(exec 3</proc/$z/mem) 2>/dev/null && echo "OPENED zygote mem"
echo "zygote=$z"`, zygote))
	require.Equal(t, 0, res.ExitCode, out)
	m := regexp.MustCompile(`zygote=(\d+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	assert.Contains(t, out, "OPENED self mem", "control: a process opens its own memory")
	assert.NotContains(t, out, "OPENED zygote mem", "the command opened the zygote's memory")
	for _, what := range []string{"READ %s environ", "READ %s maps", "READ %s fd", "READ %s cwd"} {
		assert.Contains(t, out, fmt.Sprintf(what, selfPid(out)), "control: the shell reaches its own")
		assert.NotContains(t, out, fmt.Sprintf(what, m[1]), "the command reached the zygote")
	}
}

// assertZygoteSurvives runs script, which signals the zygote, and then
// finds the same zygote serving.
func (w *warmFixture) assertZygoteSurvives(t *testing.T, p ExecutionPolicy, script string, zygote *zygoteProc) {
	t.Helper()
	res, out := w.run(t.Context(), p, script+"\nsleep 0.2\necho survived")
	assert.Equal(t, "survived\n", out)
	assert.Equal(t, 0, res.ExitCode)
	after := w.idle()
	require.Len(t, after, 1)
	assert.Same(t, zygote, after[0], "the zygote outlived every signal")
}

// TestWarmAwaitedCommandStartsOnlyOnGo: a guarded call's request awaits
// the go that follows the guard's begin; the zygote starts nothing before
// it, starts nothing on a "no", and serves on after either.
func TestWarmAwaitedCommandStartsOnlyOnGo(t *testing.T) {
	eachWarmBackend(t, testWarmAwaitedCommandStartsOnlyOnGo)
}

func testWarmAwaitedCommandStartsOnlyOnGo(t *testing.T, w *warmFixture) {
	p := w.policy(WorkspaceWrite, NetworkAllow)
	canary := filepath.Join(w.ws, "started")
	argv := []string{"bash", "-c", "echo started > started"}
	c, err := w.ex.prepare(argv, p, EgressHooks{})
	require.NoError(t, err)
	require.NotNil(t, c.guard, "workspace-write guards its protected paths")
	spec := RunSpec{Argv: argv, Dir: w.ws, Env: Environ(os.Environ(), nil)}
	req, err := warmRequest(c, spec)
	require.NoError(t, err)
	z, err := startZygote(c, argv, warmKey(c, argv))
	require.NoError(t, err)
	t.Cleanup(z.kill)

	request := func() {
		t.Helper()
		var files []*os.File
		for range helper.ZygoteFiles {
			r, wr, err := os.Pipe()
			require.NoError(t, err)
			files = append(files, r)
			t.Cleanup(func() { r.Close(); wr.Close() })
		}
		require.NoError(t, z.send(req, files))
		for _, f := range files {
			f.Close() // the zygote holds its own copies
		}
	}
	reply := func(within time.Duration) (helper.ZygoteReply, error) {
		z.ctl.SetReadDeadline(time.Now().Add(within))
		defer z.ctl.SetReadDeadline(time.Time{})
		return z.read()
	}

	request()
	_, err = reply(300 * time.Millisecond)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "the zygote answered before the go")
	assert.NoFileExists(t, canary, "the command started before the go")
	require.NoError(t, z.sendGo(false))
	r, err := reply(10 * time.Second)
	require.NoError(t, err)
	assert.False(t, r.Started, "a command called off started")
	assert.Contains(t, r.Error, "called the command off")
	assert.False(t, r.Ending, "the zygote serves on")
	assert.NoFileExists(t, canary, "a command called off ran")

	request()
	require.NoError(t, z.sendGo(true))
	r, err = reply(10 * time.Second)
	require.NoError(t, err)
	assert.True(t, r.Started, r.Error)
	r, err = reply(10 * time.Second)
	require.NoError(t, err)
	assert.True(t, r.Exited)
	assert.Equal(t, 0, r.Code)
	assert.FileExists(t, canary, "the command started on the go")
}

// TestWarmStaleZygoteAnswersAnAwaitedRequest: a Landlock zygote whose
// rules went stale refuses the request and exits, and the go that cordon
// sends meanwhile must not cost cordon that answer: a message left unread
// when the zygote exits resets the socket, and cordon, reading the reset,
// took the call for one whose command may have started (killed, exit
// 137), where a fresh sandbox should run it.
func TestWarmStaleZygoteAnswersAnAwaitedRequest(t *testing.T) {
	w := newWarmFixture(t, "landlock")
	p := w.policy(WorkspaceWrite, NetworkAllow)
	argv := []string{"true"}
	c, err := w.ex.prepare(argv, p, EgressHooks{})
	require.NoError(t, err)
	req, err := warmRequest(c, RunSpec{Argv: argv, Dir: w.ws, Env: Environ(os.Environ(), nil)})
	require.NoError(t, err)
	for try := range 5 {
		z, err := startZygote(c, argv, warmKey(c, argv))
		require.NoError(t, err)
		// The home directory lies on the way to a read-deny entry: a new
		// entry there is one the zygote's rules do not know.
		require.NoError(t, os.WriteFile(filepath.Join(w.home, fmt.Sprintf("new-%d", try)), nil, 0o644))
		var files []*os.File
		for range helper.ZygoteFiles {
			r, wr, err := os.Pipe()
			require.NoError(t, err)
			files = append(files, r)
			defer wr.Close()
		}
		require.NoError(t, z.send(req, files))
		for _, f := range files {
			f.Close()
		}
		z.sendGo(true) // at once, before the zygote has looked
		z.ctl.SetReadDeadline(time.Now().Add(10 * time.Second))
		r, err := z.read()
		require.NoError(t, err, "the stale zygote's answer was lost")
		assert.True(t, r.Ending, "a stale zygote ends")
		assert.Contains(t, r.Error, "changed")
		z.kill()
	}
}

// TestWarmGuardThatCannotBeginStartsNothing: when the guard cannot record
// the protected paths (here its store is a file, not a directory), the
// command that awaited it never runs — warm, or in the cold start that
// follows, which fails closed — and the warm sandbox serves the next call.
func TestWarmGuardThatCannotBeginStartsNothing(t *testing.T) {
	eachWarmBackend(t, testWarmGuardThatCannotBeginStartsNothing)
}

func testWarmGuardThatCannotBeginStartsNothing(t *testing.T, w *warmFixture) {
	p := w.policy(WorkspaceWrite, NetworkAllow)
	before := w.warmUp(p)

	store := guard.Dir(p.StateDir)
	require.NoError(t, os.Remove(store)) // empty between calls
	require.NoError(t, os.WriteFile(store, nil, 0o600))
	canary := filepath.Join(w.ws, "ran")
	_, err := w.ex.Run(t.Context(), p, RunSpec{Argv: []string{"bash", "-c", "echo ran > ran"}, Dir: w.ws, Env: Environ(os.Environ(), nil)})
	var ue *UnavailableError
	require.ErrorAs(t, err, &ue, "a guard that cannot begin refuses the call")
	assert.NoFileExists(t, canary, "the command ran unguarded")
	assert.Equal(t, before, w.idle(), "the sandbox that was called off serves on")

	require.NoError(t, os.Remove(store))
	res, out := w.run(t.Context(), p, "echo ran > ran")
	assert.Equal(t, Exited, res.Ending, out)
	assert.FileExists(t, canary, "control: the same command runs once the guard can begin")
}
