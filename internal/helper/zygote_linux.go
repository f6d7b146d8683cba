package helper

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// The zygote is the helper of a warm sandbox (docs/warm-sandbox.md): one
// sandbox, started once per session and policy, whose helper confines
// itself exactly as it does before it execs a command, execs itself again
// as the zygote (so that all of it is confined, execZygote), and then
// forks one command per request. Each command inherits the Landlock
// domain, the seccomp filter, no_new_privs and the empty capability sets.
// When a command's main process exits (or cordon asks), the zygote kills
// every other process of the sandbox and reaps them until none is left:
// no process outlives its call.
//
// Under bwrap the zygote is the pid namespace's init, which no signal from
// inside reaches, and kill(-1) reaches every process of the sandbox and
// nothing outside. Under Landlock it is its commands' child subreaper, each
// command in a domain of its own beneath the zygote's (forkExec), out of
// reach of its signals; the warden above kills what is left if the zygote
// dies all the same (warden_linux.go).
//
// It serves one call at a time, on the control socket it was given as its
// status descriptor (a SOCK_SEQPACKET socketpair): a request with the
// command's stdin, stdout, stderr and a kill pipe as SCM_RIGHTS, for a
// request that awaits it a go (ZygoteGo), then replies. It refuses a
// request once the sandbox is not what a cold call would get
// (zygote.stale): cordon then ends this sandbox and starts the call in a
// fresh one.

// ZygoteRequest is one command for a zygote.
type ZygoteRequest struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
	// Await: start the command only once cordon sends ZygoteGo. cordon
	// records the guarded paths meanwhile, and the zygote gets the
	// command ready (checks the sandbox, finds the command, nests its
	// thread) instead of waiting for the guard to send the request.
	Await bool `json:"await,omitempty"`
}

// ZygoteGo follows a request that awaits it: whether to start the
// command. A request that is not to start is answered with an Error.
type ZygoteGo struct {
	Go bool `json:"go"`
}

// errNotToStart is why a command cordon called off did not start.
var errNotToStart = errors.New("cordon called the command off before it started")

// ZygoteReply is what a zygote answers: Ready once at start, then for each
// request Started and, when everything the command started is gone,
// Exited — or, instead of Started, Error: the command could not start,
// and the zygote serves on unless Ending says it exits (its mounts moved,
// or the request was bad).
type ZygoteReply struct {
	Ready   bool   `json:"ready,omitempty"`
	Started bool   `json:"started,omitempty"`
	Ending  bool   `json:"ending,omitempty"`
	Error   string `json:"error,omitempty"`
	Exited  bool   `json:"exited,omitempty"`
	Code    int    `json:"code,omitempty"`
	Signal  int    `json:"signal,omitempty"`
}

// ZygoteFiles is how many descriptors come with a request: stdin, stdout,
// stderr, and the read end of the kill pipe (its write end closed means:
// kill the command now).
const ZygoteFiles = 4

// zygoteMaxMessage bounds a request (argv and environment).
const zygoteMaxMessage = 1 << 20

// ZygoteMaxReply bounds a reply: a short JSON object whose error, if any,
// is cut to maxReplyError bytes (JSON escaping may take up to six bytes a
// byte, past which it would still fit).
const (
	ZygoteMaxReply = 16 << 10
	maxReplyError  = 1 << 10
)

// zygoteServeArg is the helper's second start as a zygote (execZygote).
const zygoteServeArg = "--zygote-serve"

// execZygote runs, confined, the helper again as the zygote that serves.
// Confinement is per thread — capabilities, the seccomp filter, the
// Landlock domain — and the helper confined only the thread that would
// exec the command; the Go runtime's other threads were not. Exec'ing
// leaves one thread, the confined one, and every thread of the new
// runtime is created from it: all of the zygote is as confined as a
// command. The zygote is told its config, and the fingerprint of what its
// Landlock rules were built from (fingerprint_linux.go). It never returns.
func execZygote(cfg Config, rules rulesState) {
	ctl := cfg.StatusFD
	if _, err := unix.FcntlInt(uintptr(ctl), unix.F_SETFD, 0); err != nil {
		zygoteFail(ctl, fmt.Errorf("keeping the control socket across exec: %w", err))
	}
	argv := append([]string{os.Args[0], Arg, zygoteServeArg, strconv.Itoa(ctl), rules.String()}, cfg.Args()...)
	err := unix.Exec("/proc/self/exe", argv, helperEnv)
	zygoteFail(ctl, fmt.Errorf("starting the zygote: %w", err))
}

// zygote is a serving zygote's state.
type zygote struct {
	ctl int
	cfg Config
	// asInit: the zygote is its pid namespace's init (bwrap), so that
	// kill(-1) reaches every process of the sandbox and nothing else.
	// Otherwise (Landlock) it is its commands' child subreaper, Landlock's
	// signal scoping keeps its kill(-1) to its own domain — its commands —
	// and the reaper that started it stays outside as its own.
	asInit bool
	mounts []byte // the namespace's mountinfo at start (asInit)
	rules  rulesState
	paths  rulesPaths // what rules name, worked out once from cfg
}

// serveZygote serves requests on the control socket ctlArg until cordon
// closes it. It never returns.
func serveZygote(ctlArg, rulesArg string, cfgArgs []string) {
	ctl, err := strconv.Atoi(ctlArg)
	if err != nil || ctl < 3 {
		fmt.Fprintf(os.Stderr, "cordon: the zygote's control socket: bad value %q\n", ctlArg)
		os.Exit(125)
	}
	unix.CloseOnExec(ctl)
	cfg, err := Parse(cfgArgs)
	if err != nil {
		zygoteFail(ctl, fmt.Errorf("the zygote's config: %w", err))
	}
	rules, err := parseRulesState(rulesArg)
	if err != nil {
		zygoteFail(ctl, fmt.Errorf("the zygote's rules: %w", err))
	}
	z := &zygote{ctl: ctl, cfg: cfg, asInit: os.Getpid() == 1, rules: rules, paths: pathsOf(cfg)}
	if !z.asInit {
		// The main goroutine keeps the thread it runs on, most likely the
		// main thread, which no command may then be forked from
		// (forkExec).
		runtime.LockOSThread()
	}
	// Not dumpable, so that no command can read or write its memory,
	// descriptors or environment through /proc (exec made it dumpable
	// again).
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		zygoteFail(ctl, fmt.Errorf("making the zygote non-dumpable: %w", err))
	}
	// Every orphan of a command is the zygote's: as the namespace's init,
	// or as their subreaper.
	if !z.asInit {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			zygoteFail(ctl, fmt.Errorf("becoming a child subreaper: %w", err))
		}
		if err := signalsScoped(); err != nil {
			zygoteFail(ctl, err)
		}
	}
	discardSignals()
	resetIgnoredSignals() // those Go does not handle (32, 33): its commands inherit them
	if z.asInit {
		if z.mounts, err = os.ReadFile("/proc/self/mountinfo"); err != nil {
			zygoteFail(ctl, fmt.Errorf("reading the sandbox's mounts: %w", err))
		}
	}
	if why := z.stale(); why != "" {
		zygoteFail(ctl, errors.New(why))
	}
	zygoteSend(ctl, ZygoteReply{Ready: true})
	z.serve()
}

func (z *zygote) serve() {
	buf := make([]byte, zygoteMaxMessage)
	oob := make([]byte, unix.CmsgSpace(ZygoteFiles*4))
	for {
		n, oobn, _ := z.receive(buf, oob)
		files, err := receivedFiles(oob[:oobn])
		if err != nil || len(files) != ZygoteFiles {
			closeAll(files)
			zygoteFail(z.ctl, fmt.Errorf("a request without its %d descriptors: %v", ZygoteFiles, err))
		}
		var req ZygoteRequest
		if err := json.Unmarshal(buf[:n], &req); err != nil || len(req.Argv) == 0 {
			closeAll(files)
			zygoteFail(z.ctl, fmt.Errorf("a malformed request: %v", err))
		}
		if why := z.stale(); why != "" {
			closeAll(files)
			zygoteSend(z.ctl, ZygoteReply{Error: why, Ending: true})
			if req.Await {
				// Take cordon's go before leaving: a message left unread
				// resets the socket, and cordon would read the reset
				// instead of the answer above.
				z.awaitGo()
			}
			os.Exit(0)
		}
		zygoteSend(z.ctl, z.runOne(req, files)) // the end of the call, or why it did not start
	}
}

// stale says why the sandbox is no longer what a cold call would get: its
// mounts moved (a command moved a mount point), or the files its Landlock
// rules were built from changed. It is "" while it is.
func (z *zygote) stale() string {
	if z.asInit {
		if now, err := os.ReadFile("/proc/self/mountinfo"); err != nil || !bytes.Equal(now, z.mounts) {
			return "the sandbox's mounts moved"
		}
	}
	if !z.rules.holds(z.paths) {
		return "the files the sandbox's rules name changed"
	}
	return ""
}

// killAll kills every process of the sandbox but the zygote, at once and
// however deep its tree: kill(-1) reaches, as the pid namespace's init,
// everything in the namespace; under Landlock, everything in the zygote's
// domain (signalsScoped), which is every process it forked and nothing
// else. Killing children level by level would let the lower levels run
// while the upper ones exit.
func (z *zygote) killAll() { unix.Kill(-1, unix.SIGKILL) }

// signalsScoped proves that Landlock keeps this process's signals inside
// its domain (ABI 6), as killAll's kill(-1) needs: the reaper that
// started it, outside the domain, must be out of reach. Without scoping
// kill(-1) would reach every process of the user.
func signalsScoped() error {
	switch err := unix.Kill(os.Getppid(), 0); err {
	case unix.EPERM:
		return nil
	case nil:
		return errors.New("a warm sandbox without a pid namespace needs Landlock's signal scoping (ABI 6): the zygote can signal its reaper")
	default:
		return fmt.Errorf("checking the zygote's signal scoping: %w", err)
	}
}

// runOne runs one command to the end of everything it started: it
// replies Started (or Error) as soon as it knows, and returns the reply
// for its end.
func (z *zygote) runOne(req ZygoteRequest, files []int) ZygoteReply {
	stdio := files[:3]
	// Non-blocking, so that the poller watches it and Close wakes a read.
	unix.SetNonblock(files[3], true)
	kill := os.NewFile(uintptr(files[3]), "kill")
	defer kill.Close()
	proceed := func() bool { return !req.Await || z.awaitGo() }
	path, err := lookPath(req.Argv[0], req.Env, req.Dir)
	if err != nil {
		if !proceed() {
			closeAll(stdio)
			return ZygoteReply{Error: errNotToStart.Error()}
		}
		// As a cold helper does: the command "ran" and failed.
		writeFD(stdio[2], fmt.Sprintf("cordon: %s: %v\n", req.Argv[0], err))
		closeAll(stdio)
		zygoteSend(z.ctl, ZygoteReply{Started: true})
		return ZygoteReply{Exited: true, Code: 127}
	}
	pid, err := z.forkExec(path, req.Argv, &syscall.ProcAttr{
		Dir: req.Dir, Env: req.Env,
		Files: []uintptr{uintptr(stdio[0]), uintptr(stdio[1]), uintptr(stdio[2])},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	}, proceed)
	if err != nil {
		// Not started (a cwd that went away, an exec the kernel refused):
		// cordon starts the call cold, which reports it as a cold start
		// would.
		closeAll(stdio)
		return ZygoteReply{Error: fmt.Sprintf("%s: %v", req.Argv[0], err)}
	}
	closeAll(stdio) // the command holds its own copies
	zygoteSend(z.ctl, ZygoteReply{Started: true})
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		var b [1]byte
		if _, err := kill.Read(b[:]); !errors.Is(err, os.ErrClosed) {
			z.killAll() // cordon closed its end
		}
	}()
	// Every process left in the sandbox is the command's.
	var ended atomic.Bool
	exit := reapTree(pid, 0, false, &ended, z.killAll)
	// Stop watching the kill pipe before replying: a kill meant for this
	// call must never reach the next one.
	kill.Close()
	<-watching
	if z.asInit {
		removeSysVIPC()
	}
	reply := ZygoteReply{Exited: true, Code: exit.ExitStatus()}
	if exit.Signaled() {
		reply.Signal, reply.Code = int(exit.Signal()), 128+int(exit.Signal())
	}
	return reply
}

// awaitGo reads cordon's word on a request that awaits it. A closed
// socket means cordon is gone: nothing started, and the zygote exits.
func (z *zygote) awaitGo() bool {
	buf := make([]byte, 64)
	oob := make([]byte, unix.CmsgSpace(ZygoteFiles*4))
	n, oobn, flags := z.receive(buf, oob)
	var g ZygoteGo
	if oobn > 0 || flags&unix.MSG_TRUNC != 0 || json.Unmarshal(buf[:n], &g) != nil {
		if fds, err := receivedFiles(oob[:oobn]); err == nil {
			closeAll(fds)
		}
		zygoteFail(z.ctl, fmt.Errorf("a malformed go: %q", buf[:n]))
	}
	return g.Go
}

// receive takes cordon's next message. A closed socket means cordon is
// done with this sandbox: the zygote exits.
func (z *zygote) receive(buf, oob []byte) (n, oobn, flags int) {
	for {
		n, oobn, flags, _, err := unix.Recvmsg(z.ctl, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			os.Exit(0)
		}
		return n, oobn, flags
	}
}

// forkExec starts one command once proceed says so. Under bwrap the
// zygote is init, out of any command's reach. Under Landlock it shares its domain with nothing but
// the commands it forks, so each command goes into a domain of its own
// beneath the zygote's, as a cold command goes beneath the warden's
// (nestScope): its kill(-1), or a kill aimed at the zygote, then reaches
// its own processes only, as in a cold call, where the command's parent is
// the reaper outside.
//
// A Landlock domain is per thread and a child inherits its parent
// thread's, so the command is forked from a thread locked to a goroutine
// that nests itself first, and that thread ends with the goroutine
// (LockOSThread without an unlock): no other goroutine ever runs in the
// command's domain, and the Go runtime creates no thread from a locked
// one.
//
// proceed may wait (awaitGo): under Landlock the thread nests itself
// first, so that the wait hides that too.
func (z *zygote) forkExec(path string, argv []string, attr *syscall.ProcAttr, proceed func() bool) (int, error) {
	if z.asInit {
		if !proceed() {
			return 0, errNotToStart
		}
		return syscall.ForkExec(path, argv, attr)
	}
	type started struct {
		pid int
		err error
	}
	done := make(chan started, 1)
	var fork func()
	fork = func() {
		runtime.LockOSThread() // for good: see above
		if unix.Gettid() == unix.Getpid() {
			// The main thread, which Go never ends but parks: nested, it
			// would leave the zygote's thread group leader in the
			// command's domain for good, and every later command could
			// kill the zygote. Another goroutine forks instead; this one
			// keeps the main thread until that one holds a thread of its
			// own, so that it cannot be scheduled here again.
			ready := make(chan struct{})
			go func() {
				runtime.LockOSThread() // not the main thread, held above
				close(ready)
				fork()
			}()
			<-ready
			runtime.UnlockOSThread()
			return
		}
		if err := nestScope(); err != nil {
			proceed() // cordon's word is read all the same
			done <- started{err: err}
			return
		}
		if !proceed() {
			done <- started{err: errNotToStart}
			return
		}
		pid, err := syscall.ForkExec(path, argv, attr)
		done <- started{pid, err}
	}
	go fork()
	s := <-done
	return s.pid, s.err
}

// removeSysVIPC removes the SysV shared memory, semaphores and message
// queues of the sandbox's IPC namespace, which a cold call's namespace
// takes with it: the next call starts without them. (Only cordon's
// commands live in the namespace, all under the zygote's uid.)
func removeSysVIPC() {
	for _, kind := range []struct {
		file string
		rm   func(id int)
	}{
		{"shm", func(id int) { unix.SysvShmCtl(id, unix.IPC_RMID, nil) }},
		{"sem", func(id int) { unix.Syscall6(unix.SYS_SEMCTL, uintptr(id), 0, unix.IPC_RMID, 0, 0, 0) }},
		{"msg", func(id int) { unix.Syscall(unix.SYS_MSGCTL, uintptr(id), unix.IPC_RMID, 0) }},
	} {
		data, err := os.ReadFile("/proc/sysvipc/" + kind.file)
		if err != nil {
			continue
		}
		lines := strings.Split(string(data), "\n")
		for _, line := range lines[min(1, len(lines)):] { // after the header
			// key id perms ...: the id is the second column.
			if f := strings.Fields(line); len(f) > 1 {
				if id, err := strconv.Atoi(f[1]); err == nil {
					kind.rm(id)
				}
			}
		}
	}
}

// writeFD writes msg to fd, which stays the caller's to close (an
// *os.File would close it again when collected).
func writeFD(fd int, msg string) { unix.Write(fd, []byte(msg)) }

// lookPath finds name on the request's PATH, as exec would in the
// command's environment and directory.
func lookPath(name string, env []string, dir string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	base := dir
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(base, dir) // "" and "." are the command's directory
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("command not found")
}

func receivedFiles(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			closeAll(fds)
			return nil, err
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

func zygoteSend(ctl int, r ZygoteReply) {
	// An error names the command, whose argv[0] may be as long as a
	// request: cut to what a reply holds, or cordon could not parse it.
	if len(r.Error) > maxReplyError {
		r.Error = r.Error[:maxReplyError] + "…"
	}
	b, _ := json.Marshal(r)
	if _, err := unix.Write(ctl, b); err != nil {
		os.Exit(0) // cordon is gone; so is the sandbox, with this process
	}
}

// zygoteFail reports a failure cordon cannot recover this sandbox from, and
// ends it (and with it, in the pid namespace, everything in it).
func zygoteFail(ctl int, err error) {
	zygoteSend(ctl, ZygoteReply{Error: err.Error(), Ending: true})
	os.Exit(125)
}
