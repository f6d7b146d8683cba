package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cordonhq/cordon/internal/helper"
	"github.com/cordonhq/cordon/internal/peer"
	"github.com/cordonhq/cordon/internal/procwait"
	"golang.org/x/sys/unix"
)

// A warm sandbox (docs/warm-sandbox.md) is one sandbox kept running
// between foreground calls whose confined argv, but for the command, is
// the same — a bwrap, or under Landlock the reaper outside the sandbox:
// its helper, the zygote (internal/helper/zygote_linux.go), forks each
// command and kills everything the command left before it answers. A call
// takes an idle one or starts one, and gives it back after; anything out
// of the ordinary (a zygote that ended, refused a call because its mounts
// moved, or did not answer a kill) ends that sandbox, and a call that had
// not started yet runs cold instead.

// maxIdleWarm is how many idle warm sandboxes an executor keeps (each is
// a bwrap and a helper, a few MB): a policy change or an ended HTTP
// session leaves one idle, and the least recently used goes first.
const maxIdleWarm = 4

// warmStartTimeout bounds a zygote's start (bwrap, then the helper's
// confinement): past it the call runs cold.
const warmStartTimeout = 10 * time.Second

type warmPool struct {
	mu     sync.Mutex
	idle   []*zygoteProc // least recently used first
	closed bool          // a sandbox given back is ended, not kept
}

// zygoteProc is one warm sandbox: bwrap (or, under Landlock, the reaper
// that stays outside), and cordon's end of the zygote's control socket.
type zygoteProc struct {
	key string
	// tmp is the private /tmp of the session it serves (a part of its
	// key): once the session ends, nothing can take it again.
	tmp string
	cmd *exec.Cmd
	ctl *os.File
	// reap is cordon's end of the reaper's control pipe (Landlock): closing
	// it makes the reaper kill the zygote and every process of the
	// sandbox, and exit. Nil under bwrap, whose pid namespace ends it all.
	reap   *os.File
	exited chan struct{} // closed once bwrap (the reaper) has exited
	// lost is set once the host replaced a path whose protection the
	// sandbox's mounts keep: the sandbox is killed then, and never reused.
	lost    lostProtection
	started atomic.Bool
}

// take hands out an idle sandbox for key, and ends those that ended.
func (wp *warmPool) take(key string) *zygoteProc {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	for i := len(wp.idle) - 1; i >= 0; i-- {
		switch z := wp.idle[i]; {
		case z.ended() || z.lostProtection():
			wp.idle = slices.Delete(wp.idle, i, i+1)
			z.end() // at once: only its control socket is left to close
		case z.key == key:
			wp.idle = slices.Delete(wp.idle, i, i+1)
			return z
		}
	}
	return nil
}

func (z *zygoteProc) ended() bool {
	select {
	case <-z.exited:
		return true
	default:
		return false
	}
}

// lostProtection reports whether the watch saw the sandbox lose a
// protection: it is being killed, and takes no call meanwhile.
func (z *zygoteProc) lostProtection() bool {
	_, lost := z.lost.get()
	return lost
}

// put gives a sandbox back after a call.
func (wp *warmPool) put(z *zygoteProc) {
	wp.mu.Lock()
	if wp.closed || z.ended() || z.lostProtection() || z.sessionEnded() {
		wp.mu.Unlock()
		z.end()
		return
	}
	wp.idle = append(wp.idle, z)
	var evicted []*zygoteProc
	if over := len(wp.idle) - maxIdleWarm; over > 0 {
		evicted = append(evicted, wp.idle[:over]...)
		wp.idle = append([]*zygoteProc(nil), wp.idle[over:]...)
	}
	wp.mu.Unlock()
	for _, e := range evicted {
		e.end()
	}
}

// endSession ends the idle sandboxes that serve the session whose private
// /tmp is tmp; one busy with a call is ended when it is given back (put
// finds its /tmp gone).
func (wp *warmPool) endSession(tmp string) {
	if tmp == "" {
		return
	}
	wp.mu.Lock()
	var ended []*zygoteProc
	wp.idle = slices.DeleteFunc(wp.idle, func(z *zygoteProc) bool {
		if z.tmp == tmp {
			ended = append(ended, z)
			return true
		}
		return false
	})
	wp.mu.Unlock()
	for _, z := range ended {
		z.end()
	}
}

// sessionEnded says whether the session z serves has ended: its private
// /tmp, which the session removes as it ends, is gone.
func (z *zygoteProc) sessionEnded() bool {
	if z.tmp == "" {
		return false
	}
	_, err := os.Lstat(z.tmp)
	return errors.Is(err, os.ErrNotExist)
}

func (wp *warmPool) closeAll() {
	wp.mu.Lock()
	idle := wp.idle
	wp.idle, wp.closed = nil, true
	wp.mu.Unlock()
	for _, z := range idle {
		z.end()
	}
}

// end ends the sandbox: the zygote exits when its control socket closes,
// and the sandbox is killed whole in case it does not.
func (z *zygoteProc) end() {
	z.ctl.Close()
	select {
	case <-z.exited:
		if z.reap != nil {
			z.reap.Close()
		}
	case <-time.After(killGrace):
		z.kill()
	}
}

// kill ends the sandbox and everything in it at once, and waits for it to
// be gone. Under Landlock the reaper is asked (killed, it would leave the
// commands to init); it is killed itself only if it has not after a grace
// period, as a cold call's is.
func (z *zygoteProc) kill() {
	if z.reap != nil {
		z.reap.Close()
		select {
		case <-z.exited:
			return
		case <-time.After(killGrace):
		}
	}
	killRunner(z.cmd.Process, true)
	<-z.exited
}

// warmKey is what a warm sandbox must share with a call to run it: the
// confined argv without the command, and the variables the backend sets.
// It returns "" for a call that cannot run warm.
func warmKey(c *ConfinedArgv, argv []string) string {
	if !c.warmable || c.statusFD == 0 || c.egress != nil ||
		c.statusFD != 3+len(c.ExtraFiles) || c.reapFD != 0 && c.reapFD != c.statusFD+1 ||
		len(c.Argv) <= len(argv) {
		return ""
	}
	prefix := c.Argv[:len(c.Argv)-len(argv)]
	if prefix[len(prefix)-1] != "--" {
		return ""
	}
	return strings.Join(prefix, "\x00") + "\x01" + strings.Join(c.Env, "\x00")
}

// maxWarmRequest bounds a request's argv and environment: one message on
// the control socket must fit its send buffer (about 200 KiB); a larger
// call runs cold rather than costing a sandbox.
const maxWarmRequest = 128 << 10

// warmRequest is spec's command as the zygote takes it: with the
// directory and environment a cold launch would give it.
func warmRequest(c *ConfinedArgv, spec RunSpec) ([]byte, error) {
	dir := spec.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	return json.Marshal(helper.ZygoteRequest{Argv: spec.Argv, Env: runnerEnv(spec.Env, c.Env), Dir: dir, Await: c.guard != nil})
}

// startZygote starts a warm sandbox for c, whose command argv is argv.
func startZygote(c *ConfinedArgv, argv []string, key string) (*zygoteProc, error) {
	prefix := c.Argv[:len(c.Argv)-len(argv)]
	zargv := append([]string{}, prefix[:len(prefix)-1]...)
	if c.Backend == "bwrap" {
		// The zygote is the namespace's init (--as-pid-1): a command
		// cannot kill it (from inside, only the signals an init handles
		// reach it, and it drops each one), so `kill -9 $PPID` or
		// `kill -9 -1` ends no more than it does beneath bwrap's own init.
		// (bwrap comes after its reaper's arguments.)
		i := slices.Index(zargv, "--")
		if i < 0 || i+1 >= len(zargv) {
			return nil, invariant("no bwrap after its reaper in %q", zargv)
		}
		zargv = slices.Insert(zargv, i+2, "--as-pid-1")
	}
	zargv = append(zargv, "--zygote", "--")
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("warm sandbox: %w", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, fmt.Errorf("warm sandbox: %w", err)
	}
	ctl, child := os.NewFile(uintptr(fds[0]), "zygote control"), os.NewFile(uintptr(fds[1]), "zygote control")
	cmd := exec.Command(zargv[0], zargv[1:]...)
	cmd.Args = zargv
	cmd.Env = []string{} // the commands get theirs with each request
	cmd.Dir = "/"
	cmd.ExtraFiles = append(append([]*os.File{}, c.ExtraFiles...), child)
	var reap, reapChild *os.File
	if c.reapFD > 0 {
		if reapChild, reap, err = os.Pipe(); err != nil {
			ctl.Close()
			child.Close()
			return nil, fmt.Errorf("warm sandbox: %w", err)
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, reapChild)
	}
	if c.reapFD > 0 {
		leanReaper(cmd)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	setDeathSignal(cmd.SysProcAttr, c.reapFD > 0)
	leadGroup(cmd.SysProcAttr)
	z := &zygoteProc{key: key, cmd: cmd, ctl: ctl, reap: reap, exited: make(chan struct{})}
	// Watched for the sandbox's whole life, from before its mounts are
	// made (lasting_linux.go).
	stopWatch, err := watchLasting(c.lasting, func(path string) {
		z.lost.set(path)
		if z.started.Load() {
			z.kill()
		}
	})
	if err == nil {
		if err = cmd.Start(); err != nil {
			stopWatch()
		}
	}
	child.Close()
	if reapChild != nil {
		reapChild.Close()
	}
	if err != nil {
		ctl.Close()
		if reap != nil {
			reap.Close()
		}
		return nil, fmt.Errorf("warm sandbox: %w", err)
	}
	// Until it is ready no command runs in it: all of it is cordon's.
	helpersReady, releaseHelpers := peer.RegisterStarting(cmd.Process.Pid)
	go func() {
		defer releaseHelpers()
		procwait.Exit(cmd.Process, 0) // holding no P meanwhile
		cmd.Wait()
		stopWatch()
		close(z.exited)
	}()
	z.started.Store(true)
	if _, lost := z.lost.get(); lost {
		z.kill()
		return nil, errors.New("warm sandbox: a protected path was replaced as it started")
	}
	ctl.SetReadDeadline(time.Now().Add(warmStartTimeout))
	r, err := z.read()
	ctl.SetReadDeadline(time.Time{})
	if err != nil || !r.Ready {
		z.end()
		if err == nil {
			err = errors.New(r.Error)
		}
		return nil, fmt.Errorf("warm sandbox did not start: %w", err)
	}
	// Ready, and no command has run in it yet: every process of the
	// sandbox is bwrap or cordon's helper code, whose descriptors a cordon
	// that is not root cannot read. The HTTP peer check may pass over
	// them (internal/peer/helpers_linux.go says why).
	helpersReady()
	return z, nil
}

// read reads one reply. A message that is not JSON is the helper's own
// failure report (helper.StatusError and a message).
func (z *zygoteProc) read() (helper.ZygoteReply, error) {
	var r helper.ZygoteReply
	buf := make([]byte, helper.ZygoteMaxReply) // a reply is a short JSON object, or a failure's message
	n, err := z.ctl.Read(buf)
	if err != nil {
		return r, err
	}
	if n == 0 {
		return r, io.EOF
	}
	if err := json.Unmarshal(buf[:n], &r); err != nil {
		return r, errors.New(strings.TrimPrefix(string(buf[:n]), helper.StatusError))
	}
	return r, nil
}

// send sends a message, with descriptors for a request.
func (z *zygoteProc) send(req []byte, files []*os.File) error {
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	sc, err := z.ctl.SyscallConn()
	if err != nil {
		return err
	}
	var sendErr error
	err = sc.Write(func(fd uintptr) bool {
		var rights []byte
		if len(fds) > 0 {
			rights = unix.UnixRights(fds...)
		}
		// MSG_NOSIGNAL: a zygote that ended is an error, not a SIGPIPE.
		sendErr = unix.Sendmsg(int(fd), req, rights, nil, unix.MSG_NOSIGNAL)
		return sendErr != unix.EAGAIN
	})
	if err != nil {
		return err
	}
	return sendErr
}

// sendGo tells a zygote whether to start the request it awaits.
func (z *zygoteProc) sendGo(start bool) error {
	msg, err := json.Marshal(helper.ZygoteGo{Go: start})
	if err != nil {
		return err
	}
	return z.send(msg, nil)
}

// warmCall is one command in a warm sandbox; it stands where a launch
// stands for a cold one.
type warmCall struct {
	pool   *warmPool
	z      *zygoteProc
	c      *ConfinedArgv
	killW  *os.File
	kill   sync.Once
	done   chan struct{}
	reply  helper.ZygoteReply
	err    error
	copies sync.WaitGroup
	delay  time.Duration
	// feed starts copying the call's input in, once the command runs;
	// unfed closes the pipe instead, for a command that never ran.
	feed, unfed func()
	fed         sync.Once

	// mu orders the two ends a sandbox can come to after its call: given
	// back to the pool (Wait), or killed whole (Kill, when the zygote did
	// not answer in time) — never both, so that a kill meant for this call
	// never reaches the next call to take the sandbox.
	mu       sync.Mutex
	doomed   bool
	returned bool

	guarded bool
}

// startWarm starts spec's command in a warm sandbox for c. It returns
// false (and the caller runs the call cold) when there is none to be had
// or the command did not start in it.
func (e *Executor) startWarm(c *ConfinedArgv, spec RunSpec, tail *tailWriter, tmp string) (running, bool) {
	key := warmKey(c, spec.Argv)
	if key == "" {
		return nil, false
	}
	req, err := warmRequest(c, spec)
	if err != nil || len(req) > maxWarmRequest {
		return nil, false
	}
	// An idle sandbox first; if it turns out to have ended, or refuses the
	// call (its mounts moved), a fresh one.
	for _, idle := range []*zygoteProc{e.warm.take(key), nil} {
		z := idle
		if z == nil {
			var err error
			if z, err = startZygote(c, spec.Argv, key); err != nil {
				return nil, false
			}
			z.tmp = tmp
		}
		w := &warmCall{pool: &e.warm, z: z, c: c, done: make(chan struct{}), delay: spec.WaitDelay}
		switch w.start(req, spec, tail) {
		case warmStarted:
			return w, true
		case warmRefused:
			return nil, false
		}
		if idle == nil {
			return nil, false
		}
	}
	return nil, false
}

// warmStart is how a call's start in a warm sandbox went.
type warmStart int

const (
	warmStarted warmStart = iota
	// warmBroken: the sandbox ended, or its mounts moved: a fresh one may
	// take the call.
	warmBroken
	// warmRefused: the command itself could not start (its directory went
	// away): a cold start reports why.
	warmRefused
)

// start sends the request and waits for the zygote to start the command.
func (w *warmCall) start(req []byte, spec RunSpec, tail *tailWriter) warmStart {
	var parentEnds, childEnds []*os.File
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			f.Close()
		}
	}
	fail := func() warmStart {
		closeAll(parentEnds)
		closeAll(childEnds)
		w.pool.put(w.z) // nothing reached it
		return warmRefused
	}
	var stdin *os.File
	feedStdin := func() {}
	switch in := spec.Stdin.(type) {
	case *os.File:
		stdin = in
	case nil:
		f, err := os.Open(os.DevNull)
		if err != nil {
			return fail()
		}
		stdin, childEnds = f, append(childEnds, f)
	default:
		// A reader that is not a file: copied in through a pipe, once the
		// command runs (a call that falls back to a fresh sandbox or a cold
		// start must not have lost its input).
		r, wr, err := os.Pipe()
		if err != nil {
			return fail()
		}
		stdin, childEnds, parentEnds = r, append(childEnds, r), append(parentEnds, wr)
		feedStdin = func() {
			go func() {
				io.Copy(wr, in)
				wr.Close()
			}()
		}
	}
	output := func(dst io.Writer) (*os.File, bool) {
		r, wr, err := os.Pipe()
		if err != nil {
			return nil, false
		}
		childEnds = append(childEnds, wr)
		w.copies.Add(1)
		go func() {
			defer w.copies.Done()
			io.Copy(teeTo(dst, tail), r)
			r.Close()
		}()
		return wr, true
	}
	stdout, ok := output(spec.Stdout)
	if !ok {
		return fail()
	}
	stderr := stdout // one writer keeps the order of what both write
	if spec.Stdout == nil || spec.Stdout != spec.Stderr {
		if stderr, ok = output(spec.Stderr); !ok {
			return fail()
		}
	}
	killR, killW, err := os.Pipe()
	if err != nil {
		return fail()
	}
	childEnds = append(childEnds, killR)
	w.killW = killW

	err = w.z.send(req, []*os.File{stdin, stdout, stderr, killR})
	closeAll(childEnds) // the zygote holds its own copies now
	w.feed, w.unfed = feedStdin, func() { closeAll(parentEnds) }
	notStarted := func() {
		killW.Close()
		w.unfed()
		w.copies.Wait()
	}
	if err != nil {
		// A message on the socket arrives whole or not at all: the
		// request never reached the zygote, which has ended. A fresh
		// sandbox may take the call — once this one is gone.
		notStarted()
		w.z.end()
		return warmBroken
	}
	if w.c.guard != nil {
		// The request awaits a go (warmRequest): the zygote gets the
		// command ready while the guard records the protected paths, and
		// starts it only once they are.
		if err := w.c.guard.begin(); err != nil {
			w.callOff(notStarted)
			return warmRefused
		}
		w.guarded = true
		// A zygote that ended instead of reading the go is judged by its
		// answers below, as one that ended after the request was: a stale
		// one said so first, any other may have started the command.
		w.z.sendGo(true)
	}
	w.z.ctl.SetReadDeadline(time.Now().Add(warmStartedWait))
	r, err := w.z.read()
	w.z.ctl.SetReadDeadline(time.Time{})
	switch {
	case err == nil && r.Started:
	case errors.Is(err, os.ErrDeadlineExceeded):
		// No answer yet (a zygote stopped, or a loaded machine): the call
		// goes on as started, so that its timeout or cancellation ends it
		// (Kill) as it ends a cold call; wait takes the answer when it
		// comes.
	case err == nil && r.Error != "":
		// The zygote says the command did not start: a cold start
		// reports why. One that ends (its mounts moved) is done, and a
		// fresh sandbox may take the call once it is gone; one that could
		// not start this command serves on.
		notStarted()
		if r.Ending {
			w.z.end()
			w.endGuard()
			return warmBroken
		}
		w.endGuard()
		w.pool.put(w.z)
		return warmRefused
	default:
		// The zygote ended after it took the request: it may have
		// started the command, which must never run twice. The call ends
		// as killed, once every process of the sandbox is gone (Wait):
		// the guard ends only then, or a process still running could
		// write after it.
		w.err = fmt.Errorf("the warm sandbox ended as the command started: %v", err)
		w.fed.Do(w.unfed)
		close(w.done)
		return warmStarted
	}
	if r.Started {
		w.fed.Do(w.feed)
	}
	go w.wait()
	return warmStarted
}

// callOff tells the zygote not to start the command it is getting ready
// (the guard could not begin), and takes its answer: the sandbox serves
// on once it has said the command did not start, and is killed whole
// otherwise, so that no command ever runs unguarded.
func (w *warmCall) callOff(notStarted func()) {
	if w.z.sendGo(false) == nil {
		w.z.ctl.SetReadDeadline(time.Now().Add(warmStartedWait))
		r, err := w.z.read()
		w.z.ctl.SetReadDeadline(time.Time{})
		if err == nil && r.Error != "" && !r.Started && !r.Ending {
			notStarted()
			w.pool.put(w.z)
			return
		}
	}
	w.z.kill()
	notStarted()
}

// warmStartedWait is how long a call waits for its zygote to say whether
// the command started before going on as if it had (start).
const warmStartedWait = time.Second

// wait takes the zygote's answers for the call up to the last one: the
// command's end, or why it did not start.
func (w *warmCall) wait() {
	for {
		w.reply, w.err = w.z.read()
		if w.err != nil || !w.reply.Started {
			break
		}
		w.fed.Do(w.feed) // a late start (start)
	}
	w.fed.Do(w.unfed)
	close(w.done)
}

// Wait waits for the command and everything it started to be gone.
func (w *warmCall) Wait() (Outcome, error) {
	<-w.done
	w.kill.Do(func() { w.killW.Close() })
	var out Outcome
	switch {
	case w.err == nil && w.reply.Error != "":
		// A refusal that came after start stopped waiting for it (a
		// zygote slow to answer): the command never ran, and the call
		// reports why as a cold start that failed would. The input went
		// nowhere.
		out.RunnerFailure, out.ExitCode = w.reply.Error, 125
		if w.reply.Ending || !w.giveBack() {
			w.z.end()
		}
	case w.err != nil || !w.reply.Exited:
		// The zygote ended mid-call (a command killed it): bwrap's pid
		// namespace ended with it, and everything in it.
		w.z.end()
		out.ExitCode, out.Signal = 128+int(syscall.SIGKILL), syscall.SIGKILL
	default:
		out.ExitCode, out.Signal = w.reply.Code, syscall.Signal(w.reply.Signal)
		if !w.giveBack() {
			w.z.end()
		}
	}
	w.awaitOutput()
	// A sandbox killed because it lost a protection: the call says so,
	// whatever the command's own end looked like.
	if path, lost := w.z.lost.get(); lost {
		out.LostPath, out.LostProtection = path, true
		if w.c.guard != nil {
			w.c.guard.noteHost(w.z.lost.replaced())
		}
	}
	out.Undone, out.GuardErr = w.endGuard()
	return out, nil
}

// giveBack gives the sandbox back to the pool unless Kill doomed it, and
// reports whether it did.
func (w *warmCall) giveBack() bool {
	w.mu.Lock()
	w.returned = !w.doomed
	returned := w.returned
	w.mu.Unlock()
	if returned {
		w.pool.put(w.z)
	}
	return returned
}

// awaitOutput waits for the output to drain: every writer is dead, so it
// ends at once but for a process that escaped the sweep, which the wait
// delay bounds as it does for a cold call.
func (w *warmCall) awaitOutput() {
	drained := make(chan struct{})
	go func() {
		w.copies.Wait()
		close(drained)
	}()
	delay := w.delay
	if delay <= 0 {
		delay = killGrace
	}
	select {
	case <-drained:
	case <-time.After(delay):
	}
}

// Kill ends the command and everything it started: the zygote is asked
// (the kill pipe closes), and the whole sandbox is killed if it has not
// answered within the grace period.
func (w *warmCall) Kill() {
	w.kill.Do(func() { w.killW.Close() })
	select {
	case <-w.done:
		return
	case <-time.After(killGrace):
	}
	w.mu.Lock()
	if w.returned {
		w.mu.Unlock()
		return // it answered after all, and serves another call now
	}
	w.doomed = true
	w.mu.Unlock()
	w.z.kill()
}

func (w *warmCall) endGuard() ([]Change, error) {
	if !w.guarded {
		return nil, nil
	}
	w.guarded = false
	return w.c.guard.end()
}
