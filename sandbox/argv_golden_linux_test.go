package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cordonhq/cordon/internal/testenv"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The launch argv of each Linux backend for a few representative
// policies, as golden files: a change to how a command is confined shows
// in review as a diff of testdata/bwrap/*.argv and testdata/landlock/*.argv.
// Rewrite them with
//
//	go test ./sandbox -run 'TestBwrapArgvGolden|TestLandlockArgvGolden' -update

// linuxGoldenHome stands for the test tree in the golden files.
const linuxGoldenHome = "/home/dev"

// argvGoldenCase is a policy over a seatbeltTree (a fake home with a
// project in it) and the command to confine.
type argvGoldenCase struct {
	name   string
	policy func(tr *seatbeltTree) ExecutionPolicy
	// egress is the call's proxy as Prepare would have started it.
	egress func(tr *seatbeltTree) *egressEndpoint
}

func argvGoldenCases() []argvGoldenCase {
	return []argvGoldenCase{
		{name: "read-only", policy: func(tr *seatbeltTree) ExecutionPolicy {
			tr.project()
			return tr.resolve(tr.settings(ReadOnly, NetworkAllow, "project"))
		}},
		{name: "workspace-write-extra-write-allow", policy: func(tr *seatbeltTree) ExecutionPolicy {
			tr.project()
			tr.dirs("project/secrets", "cache")
			set := tr.settings(WorkspaceWrite, NetworkAllow, "project")
			set.ExtraWriteAllow = []string{tr.path("cache")}
			set.ExtraReadDeny = []string{tr.path("project/secrets")}
			return tr.resolve(set)
		}},
		{name: "workspace-write-network-deny", policy: func(tr *seatbeltTree) ExecutionPolicy {
			tr.dirs("project", ".ssh")
			return tr.resolve(tr.settings(WorkspaceWrite, NetworkDeny, "project"))
		}},
		{name: "workspace-write-network-restricted", policy: func(tr *seatbeltTree) ExecutionPolicy {
			// The proxy as Prepare would have started it: a fixed port, and
			// (for bwrap) its socket directory in the tree.
			tr.dirs("project", "egress")
			return tr.resolve(tr.settings(WorkspaceWrite, NetworkRestricted, "project"))
		}, egress: func(tr *seatbeltTree) *egressEndpoint {
			return &egressEndpoint{listenPort: 41234, dir: tr.path("egress")}
		}},
		{name: "danger-full-access", policy: func(tr *seatbeltTree) ExecutionPolicy {
			tr.project()
			return tr.resolve(tr.settings(DangerFullAccess, NetworkAllow, "project"))
		}},
	}
}

// goldenCommand is the command every case confines.
var goldenCommand = []string{"bash", "-c", "make test"}

// confineForGolden confines goldenCommand with prov as Executor.prepare
// would (danger mode never reaches a backend), in a tree whose runtime
// directory is its own, and renders the result.
func confineForGolden(t *testing.T, c argvGoldenCase, prov Backend) string {
	tr := newSeatbeltTree(t)
	tr.dirs("run")
	t.Setenv("XDG_RUNTIME_DIR", tr.path("run"))
	p := c.policy(tr)
	var confined *ConfinedArgv
	var err error
	if p.IsDanger() {
		confined = unconfined(goldenCommand)
	} else {
		cp, cerr := p.ToConfined()
		require.NoError(t, cerr)
		if c.egress != nil {
			cp.egress = c.egress(tr)
		}
		confined, err = prov.Confine(goldenCommand, cp)
	}
	require.NoError(t, err)
	_, isBwrap := prov.(*bwrapBackend)
	return renderArgv(t, confined, tr.base, isBwrap && !p.IsDanger())
}

// renderArgv writes one argument a line, an option with its operands on
// one line, then what else the launch does (the backend's environment, the
// guard, the watched paths, whether it may run warm), with what depends on
// the machine replaced: the test tree, the helper's path, the host's own
// Docker sockets and runtime directories (which the tree stands in for),
// and with hostABI the kernel's Landlock ABI (bwrap asks the kernel).
func renderArgv(t *testing.T, c *ConfinedArgv, base string, hostABI bool) string {
	exe, err := helperExePath()
	require.NoError(t, err)
	hostOnly := map[string]bool{}
	for _, s := range slices.Concat(dockerSockets(), runtimeDirs()) {
		if !within(s, base) {
			hostOnly[s] = true
		}
	}
	norm := func(a string) string {
		switch {
		case a == exe:
			return "$HELPER"
		case a == base || strings.HasPrefix(a, base+"/"):
			return linuxGoldenHome + strings.TrimPrefix(a, base)
		}
		return a
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# backend %s, enforcement %s\n", c.Backend, c.Enforcement)
	args := c.Argv
	for i := 0; i < len(args); i++ {
		a := args[i]
		n := operands(a)
		if i+n >= len(args) {
			n = len(args) - 1 - i
		}
		ops := args[i+1 : i+1+n]
		if slices.ContainsFunc(ops, func(o string) bool { return hostOnly[o] }) {
			i += n
			continue
		}
		line := []string{norm(a)}
		for _, o := range ops {
			line = append(line, norm(o))
		}
		if a == "--landlock" && n == 1 && hostABI {
			line[1] = "$ABI"
		}
		b.WriteString(strings.Join(line, " ") + "\n")
		i += n
	}
	for _, e := range c.Env {
		k, v, _ := strings.Cut(e, "=")
		b.WriteString("# env " + k + "=" + norm(v) + "\n")
	}
	fmt.Fprintf(&b, "# guarded: %v, warm: %v\n", c.guard != nil, c.warmable)
	for _, l := range c.lasting {
		b.WriteString("# watched: " + norm(l) + "\n")
	}
	return b.String()
}

// operands is how many arguments follow option a as its operands, in
// bwrap's and the helper's syntax.
func operands(a string) int {
	switch a {
	case "--ro-bind", "--bind", "--dev-bind":
		return 2
	case "--dev", "--proc", "--tmpfs", "--remount-ro", "--landlock", "--rw", "--proxy-port",
		"--proxy-socket", "--deny-read", "--status-fd", "--reap-fd", "--warden-fd":
		return 1
	}
	return 0
}

func checkArgvGolden(t *testing.T, dir, name, got string) {
	golden := filepath.Join("testdata", dir, name+".argv")
	if *updateGolden {
		require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./sandbox -run 'ArgvGolden' -update to create it")
	assert.Equal(t, string(want), got, "the launch changed: review the diff, then rerun with -update")
}

func TestBwrapArgvGolden(t *testing.T) {
	// The helper's Landlock wall inside bwrap is there only where the
	// kernel has Landlock: the files are written for a kernel that does.
	if abi, err := llsyscall.LandlockGetABIVersion(); err != nil || abi < 1 {
		t.Skip("the bwrap goldens assume a kernel with Landlock")
	}
	// A user who is not root gets the capture's --cap-add too
	// (TestCaptureCapsForNonRoot), and runs this test binary (TestUnprivileged)
	// away from its testdata.
	if os.Geteuid() != 0 {
		t.Skip("the bwrap goldens are root's argv")
	}
	withGoldenLists(t)
	for _, c := range argvGoldenCases() {
		t.Run(c.name, func(t *testing.T) {
			b := &bwrapBackend{path: "/usr/bin/bwrap", version: [3]int{0, 9, 0}}
			b.once.Do(func() {}) // no probe: a fixed bwrap
			checkArgvGolden(t, "bwrap", c.name, confineForGolden(t, c, b))
		})
	}
}

func TestLandlockArgvGolden(t *testing.T) {
	withGoldenLists(t)
	for _, c := range argvGoldenCases() {
		t.Run(c.name, func(t *testing.T) {
			l := &landlockBackend{abi: 6}
			l.once.Do(func() {}) // no probe: ABI 6, which a warm sandbox needs
			checkArgvGolden(t, "landlock", c.name, confineForGolden(t, c, l))
		})
	}
}

// TestCaptureCapsForNonRoot: under network restricted a user who is not
// root asks an ordinary bwrap for the three capabilities the capture's
// helper needs (and drops before the command runs); root, and a setuid
// bwrap that would refuse the flag, ask for none.
func TestCaptureCapsForNonRoot(t *testing.T) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		testenv.SkipUnlessCI(t, "no bwrap")
	}
	fi, err := os.Stat(bwrap)
	require.NoError(t, err)
	assert.Empty(t, captureCapsFor(0, bwrap), "root keeps every capability in its namespace")
	want := []string{"--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_NET_ADMIN", "--cap-add", "CAP_NET_BIND_SERVICE"}
	if fi.Mode()&os.ModeSetuid != 0 {
		want = nil
	}
	assert.Equal(t, want, captureCapsFor(65534, bwrap))
	assert.Empty(t, captureCapsFor(65534, filepath.Join(t.TempDir(), "missing")), "no bwrap there: nothing asked")
}
