package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

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
	unix.Close(f.zygote)
}

// call runs `true` in the fake sandbox as the server's foreground call
// does, guarding root's protected paths, and reports how its start went.
func (f *fakeSandbox) call(t *testing.T, set guardSet) (*warmCall, warmStart) {
	c := &ConfinedArgv{guard: &launchGuard{store: memStore, sets: []guardSet{set}}}
	w := &warmCall{pool: &warmPool{closed: true}, z: f.z, c: c, done: make(chan struct{})}
	return w, w.start([]byte(`{"argv":["true"]}`), RunSpec{Argv: []string{"true"}}, &tailWriter{max: tailSize})
}

// TestWarmZygoteEndingAsItStartsACommand: a zygote that ends after it took
// the request may have started the command. The call ends as killed — it
// is not run again in a fresh sandbox — and only once every process of
// the sandbox is gone: the guard ends after the last of them, so a process
// still writing cannot plant a hook after it.
func TestWarmZygoteEndingAsItStartsACommand(t *testing.T) {
	root, set := guardWorld(t)
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
	_, set := guardWorld(t)
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
