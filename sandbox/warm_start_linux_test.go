package sandbox

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cordonhq/cordon/sandbox/internal/guard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A zygote can end, or stop, between taking a request and saying the
// command started: under Landlock a command can reach the thread that
// forked it in the moment before that thread exits (docs/warm-sandbox.md).
// These tests play such a zygote at the socket: cordon's side of the call
// is what they test.

// fakeSandbox is a warm sandbox whose zygote the test plays: the test
// holds the zygote's end of the control socket, and sandbox is the
// process that stands for bwrap (or the reaper), whose exit ends the
// sandbox.
type fakeSandbox struct {
	z      *zygoteProc
	zygote int // the zygote's end of the control socket
}

// newFakeSandbox starts sandbox as the sandbox's process; if holdsSocket,
// it inherits the zygote's end of the socket, which then closes when it
// dies, as a real zygote's does.
func newFakeSandbox(t *testing.T, sandbox *exec.Cmd, holdsSocket bool) *fakeSandbox {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	require.NoError(t, unix.SetNonblock(fds[0], true))
	if holdsSocket {
		dup, err := unix.Dup(fds[1])
		require.NoError(t, err)
		sandbox.ExtraFiles = []*os.File{os.NewFile(uintptr(dup), "zygote")}
	}
	sandbox.SysProcAttr = &syscall.SysProcAttr{}
	leadGroup(sandbox.SysProcAttr) // as startZygote's
	require.NoError(t, sandbox.Start())
	for _, f := range sandbox.ExtraFiles {
		f.Close()
	}
	z := &zygoteProc{key: "fake", cmd: sandbox, ctl: os.NewFile(uintptr(fds[0]), "zygote control"), exited: make(chan struct{})}
	go func() {
		sandbox.Wait()
		close(z.exited)
	}()
	t.Cleanup(func() {
		sandbox.Process.Kill()
		<-z.exited
		z.ctl.Close()
	})
	return &fakeSandbox{z: z, zygote: fds[1]}
}

// takeRequest receives a request as a zygote does, closes the descriptors
// that came with it, and then closes the test's end of the socket.
func (f *fakeSandbox) takeRequest(t *testing.T) {
	f.receive(t)
	unix.Close(f.zygote)
}

// receive receives a request as a zygote does and closes the descriptors
// that came with it.
func (f *fakeSandbox) receive(t *testing.T) {
	buf, oob := make([]byte, 1<<16), make([]byte, unix.CmsgSpace(4*4))
	_, oobn, _, _, err := unix.Recvmsg(f.zygote, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if assert.NoError(t, err) {
		msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
		for _, m := range msgs {
			fds, _ := unix.ParseUnixRights(&m)
			for _, fd := range fds {
				unix.Close(fd)
			}
		}
	}
}

// call runs `true` in the fake sandbox as the server's foreground call
// does, guarding root's protected paths, and reports how its start went.
func (f *fakeSandbox) call(t *testing.T, set guard.Set) (*warmCall, warmStart) {
	return f.callWith(&warmPool{closed: true}, set, RunSpec{Argv: []string{"true"}})
}

func (f *fakeSandbox) callWith(pool *warmPool, set guard.Set, spec RunSpec) (*warmCall, warmStart) {
	c := &ConfinedArgv{guard: &launchGuard{store: guard.StoreFor(""), sets: []guard.Set{set}}}
	w := &warmCall{pool: pool, z: f.z, c: c, done: make(chan struct{})}
	return w, w.start([]byte(`{"argv":["true"]}`), spec, &tailWriter{max: tailSize})
}

// reply sends a reply as the zygote, on the test's end of the socket.
func (f *fakeSandbox) reply(t *testing.T, r string) {
	_, err := unix.Write(f.zygote, []byte(r))
	require.NoError(t, err)
}

// TestWarmZygoteEndingAsItStartsACommand: a zygote that ends after it took
// the request may have started the command. The call ends as killed — it
// is not run again in a fresh sandbox — and only once every process of
// the sandbox is gone: the guard ends after the last of them, so a process
// still writing cannot plant a hook after it.
func TestWarmZygoteEndingAsItStartsACommand(t *testing.T) {
	root, set := guardedHooks(t)
	hook := filepath.Join(root, ".git", "hooks", "pre-commit")
	// The command the zygote started before it died, still writing.
	planter := exec.Command("bash", "-c", `for i in $(seq 20); do echo evil > "$0"; sleep 0.02; done`, hook)
	f := newFakeSandbox(t, planter, false)
	go f.takeRequest(t)

	w, how := f.call(t, set)
	require.Equal(t, warmStarted, how, "a command that may have run is never run again")
	out, err := w.Wait()
	require.NoError(t, err)
	assert.Equal(t, 128+int(syscall.SIGKILL), out.ExitCode)
	assert.True(t, f.z.ended(), "the call ended before its sandbox did")
	assert.NoFileExists(t, hook, "a hook planted after the guard ended is on the host")
	assert.Contains(t, out.Undone, Change{What: "changed", Path: filepath.Join(root, ".git", "hooks")})
}

// TestWarmZygoteStoppedAsItStartsACommand: a zygote that stops before it
// says the command started does not hold the call past its timeout: the
// call goes on as started, and Kill ends the sandbox whole.
func TestWarmZygoteStoppedAsItStartsACommand(t *testing.T) {
	_, set := guardedHooks(t)
	f := newFakeSandbox(t, exec.Command("sleep", "300"), true)
	go f.takeRequest(t)

	type started struct {
		w   *warmCall
		how warmStart
	}
	got := make(chan started, 1)
	go func() {
		w, how := f.call(t, set)
		got <- started{w, how}
	}()
	var s started
	select {
	case s = <-got:
	case <-time.After(warmStartedWait + 5*time.Second):
		t.Fatal("the call waits on a stopped zygote, past any timeout")
	}
	require.Equal(t, warmStarted, s.how)
	s.w.Kill() // the call's timeout
	out, err := s.w.Wait()
	require.NoError(t, err)
	assert.Equal(t, 128+int(syscall.SIGKILL), out.ExitCode)
	assert.True(t, f.z.ended(), "the stopped sandbox was killed")
}

// TestWarmLateRefusal: a zygote slow to answer (past warmStartedWait)
// that then says the command did not start: the call reports the
// zygote's reason as a runner failure, its input is never read, and the
// sandbox, still serving, goes back to the pool.
func TestWarmLateRefusal(t *testing.T) {
	_, set := guardedHooks(t)
	f := newFakeSandbox(t, exec.Command("sleep", "300"), true)
	go func() {
		f.receive(t)
		time.Sleep(warmStartedWait + 200*time.Millisecond)
		f.reply(t, `{"error":"/gone: chdir: no such file or directory"}`)
	}()
	pool := &warmPool{}
	input := &readRecorder{}
	w, how := f.callWith(pool, set, RunSpec{Argv: []string{"true"}, Stdin: input})
	require.Equal(t, warmStarted, how)
	out, err := w.Wait()
	require.NoError(t, err)
	assert.Equal(t, "/gone: chdir: no such file or directory", out.RunnerFailure)
	assert.Equal(t, 125, out.ExitCode)
	assert.False(t, input.read.Load(), "the input of a command that never ran was read")
	assert.True(t, len(pool.idle) == 1 && pool.idle[0] == f.z, "a zygote that serves on is given back")
}

// readRecorder is an input that records whether it was read.
type readRecorder struct{ read atomic.Bool }

func (r *readRecorder) Read([]byte) (int, error) {
	r.read.Store(true)
	return 0, io.EOF
}

// TestWarmLongRefusalIsRead: the zygote's reason for not starting a
// command names it, and argv[0] may be as long as a request: the reply is
// cut to what cordon reads, and the call fails as a cold one does, in a
// sandbox that serves on.
func TestWarmLongRefusalIsRead(t *testing.T) {
	eachWarmBackend(t, func(t *testing.T, w *warmFixture) {
		p := w.policy(WorkspaceWrite, NetworkDeny)
		w.run(t.Context(), p, "true")
		long := "/" + strings.Repeat("a", 5000)
		assert.True(t, w.keeps(func() {
			var out bytes.Buffer
			res, err := w.ex.Run(t.Context(), p, RunSpec{Argv: []string{long}, Dir: p.WorkspaceRoot,
				Env: Environ(os.Environ(), nil), Stdout: &out, Stderr: &out, OwnGroup: true})
			require.NoError(t, err)
			assert.Equal(t, 127, res.ExitCode, out.String())
		}), "the sandbox was ended for a command that could not start")
	})
}

// guardedHooks is a root whose .git/hooks the guard keeps as it was.
func guardedHooks(t *testing.T) (root string, set guard.Set) {
	t.Helper()
	root = testBase(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "hooks", "pre-commit.sample"), []byte("#!/bin/sh\n"), 0o755))
	return root, guard.Set{Root: root, Paths: []string{filepath.Join(root, ".git", "hooks")}}
}
