package helper

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Run is the re-executed helper: it confines itself and execs the
// command. It never returns. Under bwrap it runs inside the namespaces
// bwrap made, so both backends share the same privilege drop and filter.
func Run(args []string) {
	// One P: the helper's work is one step after another, and every P a
	// Go process has may take a thread of its own (SPEC: pids per session).
	runtime.GOMAXPROCS(1)
	// Started again from a confined thread, every thread of theirs is
	// confined, and they change no thread's state but the zygote's
	// forking threads, which never are its main thread (zygote.forkExec):
	// they need no thread of their own.
	if len(args) >= 3 && args[0] == zygoteServeArg {
		serveZygote(args[1], args[2], args[3:])
	}
	if len(args) == 2 && args[0] == wardenArg {
		serveWarden(args[1])
	}
	if len(args) >= 2 && args[0] == BridgeArg {
		runtime.LockOSThread() // see below
		RunBridge(args[1], len(args) == 3 && args[2] == CaptureArg)
	}
	cfg, err := Parse(args)
	status := os.NewFile(uintptr(cfg.StatusFD), "status")
	if cfg.StatusFD == 0 {
		status = nil
	}
	fail := func(err error) {
		if status != nil {
			fmt.Fprintf(status, "%s%v", StatusError, err)
		}
		fmt.Fprintf(os.Stderr, "cordon: sandbox runner failed: %v\n", err)
		os.Exit(125)
	}
	if err != nil {
		fail(err)
	}
	if cfg.ReapFD > 0 && cfg.ProxySocket == "" {
		// The reaper changes no thread's state and locks none: a locked
		// thread costs the runtime's template thread besides (pids per
		// session).
		os.Exit(reap(cfg, status))
	}
	// Every step below applies to the calling thread, and the exec must
	// happen from that thread: never unlock it.
	runtime.LockOSThread()

	if cfg.ProxySocket != "" {
		// The bridge must not inherit what cordon passed the helper (the
		// status pipe, above all): only its listener.
		if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
			fail(fmt.Errorf("marking inherited descriptors close-on-exec: %w", err))
		}
		// Capture where this thread can have a network namespace of its
		// own (capture_linux.go); where it cannot, a program that ignores
		// the proxy gets no network, as without capture.
		capture := cfg.Capture && isolateNet() == nil
		if err := startBridge(cfg.ProxyPort, cfg.ProxySocket, capture); err != nil {
			fail(err)
		}
	}
	if cfg.ReapFD > 0 {
		os.Exit(reap(cfg, status))
	}
	var rules rulesState
	if cfg.Zygote {
		// Before the rules are built: a change while they are is seen.
		rules = takeRulesState(pathsOf(cfg))
	}
	if err := confineSelf(cfg); err != nil {
		fail(err)
	}
	if cfg.WardenFD > 0 {
		// The warden stays in the policy's domain; the command goes
		// beneath it (warden_linux.go).
		warden, err := startWarden(cfg.WardenFD)
		if err != nil {
			fail(err)
		}
		if status != nil && !cfg.Zygote { // a zygote's status is its control socket
			fmt.Fprintf(status, "%s%d\n", StatusHelper, warden)
		}
		if err := nestScope(); err != nil {
			fail(err)
		}
	}
	if cfg.Zygote {
		execZygote(cfg, rules)
	}
	path, lookErr := exec.LookPath(cfg.Argv[0])
	if status != nil {
		status.WriteString(StatusStarted)
	}
	if lookErr != nil {
		fmt.Fprintf(os.Stderr, "cordon: %s: command not found\n", cfg.Argv[0])
		os.Exit(127)
	}
	resetIgnoredSignals()
	err = unix.Exec(path, cfg.Argv, os.Environ())
	fmt.Fprintf(os.Stderr, "cordon: %s: %v\n", cfg.Argv[0], err)
	if errors.Is(err, unix.ENOENT) {
		os.Exit(127)
	}
	os.Exit(126)
}

// confineSelf applies, in order: close-on-exec for every inherited fd
// beyond 0–2, no_new_privs, Landlock, the capability drop, seccomp.
func confineSelf(cfg Config) error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fmt.Errorf("marking inherited descriptors close-on-exec: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	if cfg.LandlockABI > 0 {
		if err := applyLandlock(cfg); err != nil {
			return err
		}
	}
	if err := dropCapabilities(); err != nil {
		return err
	}
	return installSeccomp(SeccompOptions{NetDeny: cfg.NetDeny, NetRestricted: cfg.ProxyPort > 0,
		MetadataDeny: cfg.MetadataDeny, IPCDeny: cfg.IPCDeny})
}

// landlockConfigs maps an ABI to go-landlock's config for it. ABIs above
// the last one listed use that one: newer rights (pathname unix sockets,
// UDP) are then left unhandled rather than breaking commands unexpectedly.
var landlockConfigs = []landlock.Config{
	1: landlock.V1, 2: landlock.V2, 3: landlock.V3, 4: landlock.V4,
	5: landlock.V5, 6: landlock.V6, 7: landlock.V7, 8: landlock.V8,
}

func applyLandlock(cfg Config) error {
	// Never trust a best-effort mode: it succeeds with no Landlock at all.
	abi, err := llsyscall.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return fmt.Errorf("landlock is not available (ABI %d): %v", abi, err)
	}
	if abi < cfg.LandlockABI {
		return fmt.Errorf("landlock ABI %d is older than the %d the policy was built for", abi, cfg.LandlockABI)
	}
	use := min(cfg.LandlockABI, len(landlockConfigs)-1)
	base := landlockConfigs[use]
	ll := landlock.Config{HandledAccessFS: base.HandledAccessFS}
	var netRules []landlock.Rule
	switch {
	case cfg.NetDeny:
		ll.HandledAccessNet = base.HandledAccessNet // no port rules: all TCP bind/connect denied
	case cfg.ProxyPort > 0 && use >= 4:
		// Connect to the proxy's port only, bind nowhere.
		ll.HandledAccessNet = base.HandledAccessNet
		netRules = append(netRules, landlock.ConnectTCP(uint16(cfg.ProxyPort)))
		if cfg.Capture {
			// The capture's stub DNS and listeners, in the network
			// namespace of the sandbox alone (bwrap): nothing else
			// listens there.
			netRules = append(netRules, landlock.ConnectTCP(53), landlock.ConnectTCP(80), landlock.ConnectTCP(443))
		}
	}
	if use >= 6 {
		// Signals and abstract unix sockets only reach processes inside
		// the sandbox: a D-Bus bus or agent listening on an abstract
		// address outside would otherwise act for the command.
		ll.Scoped = landlock.ScopedSet(llsyscall.ScopeSignal | llsyscall.ScopeAbstractUnixSocket)
	}
	rules := append(ReadRules(landlockDenyRead(cfg)),
		landlock.RWFiles(landlockDeviceFiles...).IgnoreIfMissing(),
		landlock.ROFiles(landlockRandomFiles...).IgnoreIfMissing(),
		// The helper itself, which a zygote execs again: inside bwrap it
		// may lie where the sandbox's own mounts hide it (under the
		// host's /tmp), beyond every grant made by path.
		landlock.PathAccess(readFileExec, "/proc/self/exe"))
	if use >= 5 {
		// ioctls on those devices only (a terminal's own settings through
		// /dev/tty); a command's inherited terminal keeps the rights it
		// was opened with.
		rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(llsyscall.AccessFSIoctlDev), landlockDeviceFiles...).IgnoreIfMissing())
	}
	if len(cfg.Writable) > 0 {
		rw := landlock.RWDirs(cfg.Writable...)
		if use >= 2 {
			rw = rw.WithRefer()
		}
		rules = append(rules, rw)
	}
	fd, flags, err := ll.NewRulesetFD(append(rules, netRules...)...)
	if err != nil {
		return fmt.Errorf("building landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("landlock produced no ruleset")
	}
	defer unix.Close(fd)
	if err := llsyscall.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("enforcing landlock ruleset: %w", err)
	}
	return nil
}

// Secure bits that stop uid 0 from regaining capabilities on exec.
const (
	secbitNoRoot             = 1 << 0
	secbitNoRootLocked       = 1 << 1
	secbitNoSetuidFixup      = 1 << 2
	secbitNoSetuidFixupLockd = 1 << 3
	secbitKeepCapsLocked     = 1 << 5
	secbitNoCapAmbientRaise  = 1 << 6
	secbitNoCapAmbRaiseLockd = 1 << 7
)

// dropCapabilities empties every capability set. As root (directly with
// Landlock, or in bwrap's user namespace) the helper starts with nearly
// all of them; a confined command must have none.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	canSetPCap := hasEffectiveCap(unix.CAP_SETPCAP)
	if canSetPCap {
		for c := 0; c < 64; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
				if err == unix.EINVAL {
					break // past the last capability this kernel knows
				}
				return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
			}
		}
		bits := secbitNoRoot | secbitNoRootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLockd |
			secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbRaiseLockd
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
			return fmt.Errorf("setting securebits: %w", err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clearing capabilities: %w", err)
	}
	return nil
}

func hasEffectiveCap(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[c/32].Effective&(1<<(uint(c)%32)) != 0
}

// helperEnv is the whole environment of a helper that runs no command
// with its own (the zygote, which gives each command the request's; the
// warden): one P from the runtime's start, so that it spins up no thread
// for the others (runtime.GOMAXPROCS later does not take back the ones
// it started).
var helperEnv = []string{"GOMAXPROCS=1"}
