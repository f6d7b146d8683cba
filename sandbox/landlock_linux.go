package sandbox

import (
	"github.com/cordonhq/cordon/internal/helper"
	"github.com/cordonhq/cordon/internal/pathx"

	"fmt"
	"slices"
	"strconv"
	"sync"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// landlockBackend confines with kernel Landlock, applied by cordon's own
// re-executed helper just before it execs the command.
type landlockBackend struct {
	once sync.Once
	abi  int
	err  error
}

// newLandlock returns the Landlock backend.
func newLandlock() Backend { return &landlockBackend{} }

func (l *landlockBackend) Name() string { return "landlock" }

func (l *landlockBackend) detect() {
	l.once.Do(func() {
		// Check the ABI ourselves: go-landlock's best-effort mode would
		// report success with no Landlock at all.
		abi, err := llsyscall.LandlockGetABIVersion()
		switch {
		case err != nil:
			l.err = fmt.Errorf("landlock is not available on this kernel: %v (needs Linux ≥ 5.13 with lsm=landlock)", err)
		case abi < 1:
			l.err = fmt.Errorf("landlock ABI %d is not usable", abi)
		default:
			l.abi = abi
		}
	})
}

func (l *landlockBackend) Version() string {
	l.detect()
	if l.abi == 0 {
		return ""
	}
	return "ABI " + strconv.Itoa(l.abi)
}

func (l *landlockBackend) Available() error {
	l.detect()
	return l.err
}

var landlockDenialSignatures = []string{"Permission denied", "Operation not permitted", "Invalid cross-device link"}

var landlockRunnerRules = []RunnerFailureRule{
	{AllowedExitCodes: []int{125}, FatalSignatures: []string{"cordon: sandbox runner failed"}},
}

// Limits names what Landlock cannot enforce: it only grants access, so it
// cannot take writes back beneath a writable root, and it cannot give the
// command a private /tmp or IPC namespace.
func (l *landlockBackend) Limits() (Enforcement, []string) {
	l.detect()
	un := []string{
		"read-deny list: refused by the OS (file reads are granted on the entries' siblings only), but the names inside a read-deny directory stay listable, and an entry inside a writable root is enforced by the FS fence only, where the list names it (a command may move it)",
		"protected paths: inside writable roots guarded, not refused — cordon records them before each command and restores them (and disarms a repository the command made) once every process of it has exited; while the command runs, what it writes there exists",
		"cordon's own config and state directories: a writable root that contains one (a workspace at or above your home directory) is refused",
		"private /tmp: /tmp stays read-only and TMPDIR points at the session tmp",
		"file metadata (chmod, chown, timestamps, xattrs) outside the writable roots in workspace-write: Landlock does not govern it (in read-only mode seccomp refuses it everywhere)",
		"other processes' command lines (/proc/PID/cmdline) stay readable: there is no pid namespace; pass secrets to programs through files or the environment, not arguments",
	}
	if l.abi < 2 {
		un = append(un, "rename and link across directories: refused even inside writable roots (ABI < 2)")
	}
	if l.abi < 3 {
		un = append(un, "truncate: not restricted (ABI < 3)")
	}
	if l.abi < 4 {
		un = append(un, "network deny: TCP not restricted by Landlock (ABI < 4); seccomp still refuses new sockets")
	}
	if l.abi < 5 {
		un = append(un, "device ioctl: not restricted (ABI < 5)")
	}
	if l.abi < 6 {
		un = append(un, "signals and abstract unix sockets outside the sandbox: not restricted (ABI < 6)",
			"no process outliving its call: without signal scoping there is no warden to kill the tree at once, and the reaper's walk of /proc is best effort: a tree that forks and exits as it is walked can outrun it (ABI < 6)")
	}
	un = append(un, "network restricted: Landlock allows TCP connect to the egress proxy's port only, but cannot tell addresses apart: any host, local or remote, is reachable on that one port number (a fresh random one per call), and it does not govern UDP; seccomp refuses UDP, raw, IPv6 and unix sockets")
	un = append(un, "unix sockets on the file system ($XDG_RUNTIME_DIR: D-Bus session bus, agents) stay reachable with network allow: Landlock cannot hide them")
	return EnforcementPartial, un
}

func (l *landlockBackend) Confine(argv []string, cp ConfinedPolicy) (*ConfinedArgv, error) {
	if err := confinable(l, argv); err != nil {
		return nil, err
	}
	exe, err := helperExePath()
	if err != nil {
		return nil, &UnavailableError{Reason: err.Error()}
	}
	p := cp.Policy()
	if err := controlPlaneOutside(p, "Landlock"); err != nil {
		return nil, err
	}
	// A protected path that is a symlink is refused here as with every
	// backend; the rest is guarded: Landlock cannot keep one path of a
	// writable directory read-only.
	if err := checkProtected(p); err != nil {
		return nil, err
	}
	if err := checkSecretFiles(p); err != nil {
		return nil, err
	}
	const statusFD, reapFD = 3, 4
	hc := helper.Config{
		LandlockABI: l.abi,
		Writable:    p.WritableRoots,
		NetDeny:     p.Network == NetworkDeny,
		// In read-only mode nothing may change, metadata included.
		MetadataDeny: p.Mode == ReadOnly,
		IPCDeny:      true,
		StatusFD:     statusFD,
		ReapFD:       reapFD,
		Argv:         argv,
	}
	if p.Network == NetworkRestricted {
		if cp.egress == nil {
			return nil, invariant("network restricted without an egress proxy")
		}
		if l.abi < 4 {
			return nil, &UnavailableError{Reason: fmt.Sprintf("network restricted needs Landlock ABI ≥ 4 (TCP rules); this kernel has %d", l.abi)}
		}
		hc.ProxyPort = cp.egress.port()
	}
	for _, d := range p.ReadDeny {
		if !pathx.WithinAny(d, p.WritableRoots) {
			hc.DenyRead = append(hc.DenyRead, d)
		}
	}
	var guarded []string
	for _, prot := range slices.Concat(p.Protected, p.findings().readDenyLinks) {
		if pathx.WithinAny(prot, userRoots(p)) && !slices.Contains(guarded, prot) {
			guarded = append(guarded, prot)
		}
	}
	enf, un := l.Limits()
	c := &ConfinedArgv{
		Backend:            "landlock",
		Argv:               append([]string{exe, helper.Arg}, hc.Args()...),
		Enforcement:        enf,
		Unenforced:         un,
		DenialSignatures:   landlockDenialSignatures,
		RunnerFailureRules: landlockRunnerRules,
		statusFD:           statusFD,
		reapFD:             reapFD,
		guard:              newLaunchGuard(p, guarded),
		// A warm sandbox needs signal scoping (ABI 6): the zygote's
		// kill(-1) must reach its own commands and nothing else, and no
		// command may reach the zygote, the warden or the reaper
		// (docs/warm-sandbox.md).
		warmable: l.abi >= 6,
	}
	if p.TmpDir != "" {
		c.Env = []string{"TMPDIR=" + p.TmpDir}
	}
	return c, nil
}
