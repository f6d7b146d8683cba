package sandbox

import (
	"bytes"

	"github.com/cordonhq/cordon/internal/helper"
	"github.com/cordonhq/cordon/internal/procwait"

	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// bwrapBackend confines with bubblewrap: namespaces and a read-only view
// of the host with the writable roots bound back in, then cordon's own
// helper for the privilege drop and the seccomp filter.
type bwrapBackend struct {
	once    sync.Once
	path    string
	version [3]int
	err     error
}

// newBwrap returns the bubblewrap backend (found on PATH).
func newBwrap() Backend { return &bwrapBackend{} }

func (b *bwrapBackend) Name() string { return "bwrap" }

func (b *bwrapBackend) detect() {
	b.once.Do(func() {
		b.path, b.err = exec.LookPath("bwrap")
		if b.err != nil {
			b.err = fmt.Errorf("bwrap not found on PATH (install bubblewrap: apt-get install bubblewrap)")
			return
		}
		var out bytes.Buffer
		cmd := exec.Command(b.path, "--version")
		cmd.Stdout = &out
		if err := procwait.Run(cmd); err != nil {
			b.err = fmt.Errorf("%s --version failed: %v", b.path, err)
			return
		}
		v, ok := parseBwrapVersion(out.String())
		if !ok {
			b.err = fmt.Errorf("cannot read bwrap's version from %q", strings.TrimSpace(out.String()))
			return
		}
		b.version = v
		if !versionAtLeast(v, 0, 5, 0) {
			b.err = fmt.Errorf("bwrap %s is too old: cordon needs bubblewrap ≥ 0.5", b.Version())
		}
	})
}

var bwrapVersionRE = regexp.MustCompile(`(\d+)\.(\d+)(?:\.(\d+))?`)

func parseBwrapVersion(s string) ([3]int, bool) {
	m := bwrapVersionRE.FindStringSubmatch(s)
	if m == nil {
		return [3]int{}, false
	}
	var v [3]int
	for i := range 3 {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	return v, true
}

func versionAtLeast(v [3]int, major, minor, patch int) bool {
	return slices.Compare(v[:], []int{major, minor, patch}) >= 0
}

func (b *bwrapBackend) Version() string {
	b.detect()
	if b.path == "" {
		return ""
	}
	return fmt.Sprintf("%d.%d.%d", b.version[0], b.version[1], b.version[2])
}

func (b *bwrapBackend) Available() error {
	b.detect()
	return b.err
}

// bwrapDenialSignatures are what tools print when a bind is read-only or a
// path is hidden.
// "Invalid cross-device link" is a hard link or rename across the
// boundary between a writable bind and the read-only root.
var bwrapDenialSignatures = []string{"Read-only file system", "Permission denied", "Operation not permitted", "Invalid cross-device link"}

var bwrapRunnerRules = []RunnerFailureRule{
	{AllowedExitCodes: []int{1}, FatalSignatures: []string{"bwrap: "}},
	{AllowedExitCodes: []int{125}, FatalSignatures: []string{"cordon: sandbox runner failed"}},
}

// dockerSockets are covered so a confined command cannot ask the Docker
// daemon (root on the host) to do what the sandbox forbids.
func dockerSockets() []string {
	socks := []string{"/run/docker.sock", "/var/run/docker.sock"}
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" {
		socks = append(socks, filepath.Join(rt, "docker.sock"))
	}
	var out []string
	for _, s := range socks {
		if c, err := filepath.EvalSymlinks(s); err == nil && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func (b *bwrapBackend) Confine(argv []string, cp ConfinedPolicy) (*ConfinedArgv, error) {
	if err := confinable(b, argv); err != nil {
		return nil, err
	}
	exe, err := helperExe()
	if err != nil {
		return nil, &UnavailableError{Reason: err.Error()}
	}
	p := cp.Policy()
	plan, err := planMounts(p)
	if err != nil {
		return nil, err
	}
	facts := callFacts{egress: cp.egress, dockerSockets: dockerSockets(), runtimeDirs: runtimeDirs()}
	args := b.args(p, plan, facts)
	const exeFD, statusFD = 3, 4
	hc := helper.Config{NetDeny: p.Network == NetworkDeny, StatusFD: statusFD, Argv: argv}
	if p.Network == NetworkRestricted {
		if cp.egress == nil || cp.egress.dir == "" {
			return nil, invariant("network restricted without an egress proxy socket")
		}
		hc.ProxyPort, hc.ProxySocket = cp.egress.port(), cp.egress.socketInside()
		hc.Capture = true
		args = append(args, captureCaps(b.path)...)
	}
	// Landlock inside bwrap as a second wall where the kernel has it: it
	// refuses writes to FIFOs and devices outside the writable roots, which
	// a read-only bind lets through, and (ABI 6) abstract unix sockets and
	// signals outside the sandbox.
	if abi, err := llsyscall.LandlockGetABIVersion(); err == nil && abi >= 1 {
		hc.LandlockABI = abi
		hc.MetadataDeny = p.Mode == ReadOnly
		for _, r := range p.WritableRoots {
			if r == p.TmpDir {
				r = "/tmp"
			}
			hc.Writable = append(hc.Writable, r)
		}
		if p.TmpDir == "" {
			hc.Writable = append(hc.Writable, "/tmp")
		}
		// The read-deny entries outside the writable roots get no read
		// grant either (readgrants_linux.go): the mount that hides one
		// follows the file, and a file the host renames over it later
		// (git credential-store, an agent rewriting its config) is a new
		// inode that no rule grants. Beneath a writable root Landlock
		// grants reads with writes; there the watch ends the sandbox.
		hc.DenyRead = landlockDenyReadInBwrap(p, cp.egress)
	}
	args = append(args, "--", "/proc/self/fd/"+strconv.Itoa(exeFD), helper.Arg)
	args = append(args, hc.Args()...)
	c := &ConfinedArgv{
		Backend:            "bwrap",
		Argv:               append([]string{b.path}, args...),
		ExtraFiles:         []*os.File{exe},
		Env:                []string{"TMPDIR=/tmp"},
		Enforcement:        EnforcementFull,
		DenialSignatures:   bwrapDenialSignatures,
		RunnerFailureRules: bwrapRunnerRules,
		statusFD:           statusFD,
		// The pid namespace makes the zygote init: nothing inside can
		// signal it, and kill(-1) reaches every process of the sandbox.
		warmable: true,
	}
	// Existing protected paths are guarded too: their read-only mount
	// follows the file, so a file the host renames over one while the
	// sandbox lives is writable inside until the watch ends the sandbox
	// (lasting_linux.go); the guard undoes what was written meanwhile.
	if c.guard = newLaunchGuard(p, slices.Concat(plan.Guard, plan.ProtectExisting)); c.guard != nil {
		c.guard.mounted = true
	}
	c.lasting = lastingPaths(p, plan, hc.LandlockABI > 0)
	// bwrap beneath a reaper (internal/helper/reaper_linux.go) that is
	// cordon's child: bwrap arms --die-with-parent in the namespace's init
	// only once its setup is done, and a cordon killed before then (or
	// while bwrap starts the warm sandbox's zygote) left the sandbox
	// running under init. The reaper waits on a pipe only cordon holds,
	// which the kernel closes however cordon ends, and then kills bwrap
	// and everything beneath it; it confines nothing and passes bwrap its
	// descriptors as they are.
	hostExe, err := helperExePath()
	if err != nil {
		return nil, &UnavailableError{Reason: err.Error()}
	}
	const reapFD = statusFD + 1
	rc := helper.Config{ReapFD: reapFD, Unconfined: true, PassFDs: true, Argv: c.Argv}
	c.Argv = append([]string{hostExe, helper.Arg}, rc.Args()...)
	c.reapFD = reapFD
	return c, nil
}

// args builds bwrap's arguments. Order matters: later mounts lie on top of
// earlier ones, so the read-only root comes first, then /tmp, then the
// writable roots (outer before inner), then the protected paths and the
// hidden ones on top. It reads nothing: what it needs of the machine is
// in facts.
func (b *bwrapBackend) args(p ExecutionPolicy, plan mountPlan, facts callFacts) []string {
	a := []string{
		"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup",
	}
	if versionAtLeast(b.version, 0, 8, 0) {
		a = append(a, "--disable-userns")
	}
	if p.Network == NetworkDeny || p.Network == NetworkRestricted {
		a = append(a, "--unshare-net")
	}
	a = append(a, "--die-with-parent", "--new-session",
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		// Global sysctls: uid 0 mapped to 0 could write them through the
		// owner bits (kernel.core_pattern runs a program as host root).
		"--ro-bind", "/proc/sys", "/proc/sys",
	)
	if p.TmpDir != "" {
		a = append(a, "--bind", p.TmpDir, "/tmp")
	} else {
		a = append(a, "--tmpfs", "/tmp")
	}
	// What a human-typed command runs from under the host's /tmp, read-only
	// over the private one; the roots bound below may lie on top of it.
	for _, t := range p.ProgramTrees {
		a = append(a, "--ro-bind", t, t)
	}
	if facts.egress != nil && facts.egress.dir != "" {
		a = append(a, "--ro-bind", facts.egress.dir, egressSocketDir)
		a = append(a, facts.egress.captureArgs()...)
	}
	// The workspace is always bound, read-only at least, so that it stays
	// visible when it lives under the host's /tmp.
	binds := map[string]string{p.WorkspaceRoot: "--ro-bind"}
	for _, r := range p.WritableRoots {
		if r != p.TmpDir {
			binds[r] = "--bind"
		}
	}
	paths := make([]string, 0, len(binds))
	for path := range binds {
		paths = append(paths, path)
	}
	slices.SortFunc(paths, func(x, y string) int { return len(x) - len(y) })
	for _, path := range paths {
		a = append(a, binds[path], path, path)
	}
	// Parents of protected paths become mount points of their own, so
	// they cannot be renamed away with the protection inside them (EBUSY).
	for _, pin := range plan.PinDirs {
		a = append(a, "--bind", pin, pin)
	}
	for _, prot := range plan.ProtectExisting {
		a = append(a, "--ro-bind", prot, prot)
	}
	ownBound := false
	for _, d := range plan.HideDirs {
		a = append(a, "--tmpfs", d)
		// A secret's file in a hidden directory (~/.config/gh/hosts.yml)
		// shows its masked copy, alone, while the tmpfs takes mount points.
		for _, f := range facts.egress.maskedWithin(d) {
			a = append(a, "--ro-bind", facts.egress.maskedCopy(f), f)
		}
		if p.OwnDir != "" && within(p.OwnDir, d) {
			// The command's own directory beneath a hidden one (a wrap
			// class's, under cordon's state): bound while the tmpfs can
			// still take its mount point.
			a = append(a, "--bind", p.OwnDir, p.OwnDir)
			ownBound = true
		}
		a = append(a, "--remount-ro", d)
	}
	for _, f := range plan.HideFiles {
		if slices.ContainsFunc(plan.HideDirs, func(d string) bool { return within(f, d) && f != d }) {
			continue // hidden with its directory, which is read-only now
		}
		// A secret's file shows its masked copy, never the real bytes.
		hide := "/dev/null"
		if cp := facts.egress.maskedCopy(f); cp != "" {
			hide = cp
		}
		a = append(a, "--ro-bind", hide, f)
	}
	if p.OwnDir != "" && !ownBound {
		a = append(a, "--bind", p.OwnDir, p.OwnDir)
	}
	for _, s := range facts.dockerSockets {
		a = append(a, "--ro-bind", "/dev/null", s)
	}
	for _, d := range facts.runtimeDirs {
		a = append(a, "--tmpfs", d)
	}
	return a
}

// runtimeDirs are the user's runtime directories ($XDG_RUNTIME_DIR,
// /run/user/UID). They hold sockets of programs that act for the user
// outside any sandbox — the D-Bus session bus (systemd-run --user), ssh-
// and gpg-agents, keyrings — and a read-only bind does not stop connect(),
// so they are replaced by an empty tmpfs.
func runtimeDirs() []string {
	var dirs []string
	for _, d := range []string{os.Getenv("XDG_RUNTIME_DIR"), fmt.Sprintf("/run/user/%d", os.Geteuid())} {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		if c, err := filepath.EvalSymlinks(d); err == nil && !slices.Contains(dirs, c) {
			if fi, err := os.Stat(c); err == nil && fi.IsDir() {
				dirs = append(dirs, c)
			}
		}
	}
	return dirs
}

// Limits reports what bwrap enforces: everything in the policy.
func (b *bwrapBackend) Limits() (Enforcement, []string) { return EnforcementFull, nil }
