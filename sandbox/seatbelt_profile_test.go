package sandbox

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current output")

// goldenHome is where the golden files say the test tree lives: the
// temporary directory is replaced by it, so the files read like a Mac.
const goldenHome = "/Users/dev"

// seatbeltTree is a fake home directory with a project in it, built on
// disk because the profile depends on what exists (a protected path that
// exists is denied as itself, a missing one by its first missing part).
type seatbeltTree struct {
	base string // stands for goldenHome
	t    *testing.T
}

func newSeatbeltTree(t *testing.T) *seatbeltTree {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	if seatbeltAlias(base) != "" {
		// On macOS the temp dir is under /private/var, whose paths get a
		// second spelling; the golden files are written without one.
		cache, err := os.UserCacheDir()
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(cache, 0o700))
		base, err = os.MkdirTemp(cache, "cordon-golden-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(base) })
		base, err = filepath.EvalSymlinks(base)
		require.NoError(t, err)
	}
	return &seatbeltTree{base: base, t: t}
}

func (tr *seatbeltTree) path(rel string) string {
	return filepath.Join(tr.base, filepath.FromSlash(rel))
}

func (tr *seatbeltTree) dirs(rels ...string) {
	for _, r := range rels {
		require.NoError(tr.t, os.MkdirAll(tr.path(r), 0o755))
	}
}

func (tr *seatbeltTree) file(rel, content string) {
	require.NoError(tr.t, os.MkdirAll(filepath.Dir(tr.path(rel)), 0o755))
	require.NoError(tr.t, os.WriteFile(tr.path(rel), []byte(content), 0o644))
}

// settings are a deployment's settings for a workspace in the tree, with
// cordon's state and config in the usual places under the fake home.
func (tr *seatbeltTree) settings(mode Mode, network Network, workspace string) Settings {
	return Settings{
		Mode: mode, Network: network, Workspace: tr.path(workspace),
		Home: tr.base, StateDir: tr.path(".local/state/cordon"), ConfigDir: tr.path(".config/cordon"),
	}
}

// resolve resolves the policy with the session tmp where cordon puts it.
func (tr *seatbeltTree) resolve(set Settings) ExecutionPolicy {
	tmp := tr.path(".local/state/cordon/tmp/0123abcd")
	require.NoError(tr.t, os.MkdirAll(tmp, 0o700))
	svc := PolicyService{Settings: set}
	p, err := svc.Resolve(Request{TmpDir: tmp})
	require.NoError(tr.t, err)
	return p
}

// project lays out a git checkout with hooks, config and editor settings,
// and credentials in the home directory (~/.ssh exists, ~/.aws does not).
func (tr *seatbeltTree) project() {
	tr.dirs("project/.git/hooks", "project/.vscode", "project/src", ".ssh", ".config/cordon")
	tr.file("project/.git/config", "[core]\n")
	tr.file(".ssh/id_ed25519", "secret\n")
}

type seatbeltCase struct {
	name   string
	policy func(t *testing.T) (ExecutionPolicy, string)
	// sockets are Docker sockets, relative to the tree's base.
	sockets []string
	// egressPort is the port of the call's proxy (network restricted).
	egressPort int
}

// profile generates the case's profile; it returns the tree's base too.
func (c seatbeltCase) profile(t *testing.T) (seatbeltSpec, ExecutionPolicy, string) {
	p, base := c.policy(t)
	var sockets []string
	for _, s := range c.sockets {
		sockets = append(sockets, filepath.Join(cmpOrString(base, goldenHome), s))
	}
	facts := callFacts{dockerSockets: sockets}
	if c.egressPort != 0 {
		facts.egress = &egressEndpoint{listenPort: c.egressPort}
	}
	spec, err := seatbeltProfile(p, facts)
	require.NoError(t, err)
	return spec, p, base
}

func cmpOrString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func seatbeltCases() []seatbeltCase {
	return []seatbeltCase{
		{name: "read-only", policy: func(t *testing.T) (ExecutionPolicy, string) {
			tr := newSeatbeltTree(t)
			tr.project()
			return tr.resolve(tr.settings(ReadOnly, NetworkAllow, "project")), tr.base
		}},
		{name: "workspace-write", sockets: []string{".colima/default/docker.sock"},
			policy: func(t *testing.T) (ExecutionPolicy, string) {
				tr := newSeatbeltTree(t)
				tr.project()
				tr.dirs("project/secrets", "cache")
				set := tr.settings(WorkspaceWrite, NetworkAllow, "project")
				set.ExtraWriteAllow = []string{tr.path("cache")}
				set.ExtraReadDeny = []string{tr.path("project/secrets"), tr.path(".config/op")}
				set.ProtectedNames = []string{"deploy/prod.sh"}
				return tr.resolve(set), tr.base
			}},
		{name: "workspace-write-network-deny", policy: func(t *testing.T) (ExecutionPolicy, string) {
			tr := newSeatbeltTree(t)
			tr.dirs("project", ".ssh")
			return tr.resolve(tr.settings(WorkspaceWrite, NetworkDeny, "project")), tr.base
		}},
		{name: "workspace-write-network-restricted", policy: func(t *testing.T) (ExecutionPolicy, string) {
			// Out only to the egress proxy's port on loopback.
			tr := newSeatbeltTree(t)
			tr.dirs("project")
			return tr.resolve(tr.settings(WorkspaceWrite, NetworkRestricted, "project")), tr.base
		}, egressPort: 41234},
		{name: "linked-worktree", policy: func(t *testing.T) (ExecutionPolicy, string) {
			tr := newSeatbeltTree(t)
			tr.dirs("main/.git/hooks", "main/.git/worktrees/feature", "feature")
			tr.file("main/.git/config", "[core]\n")
			tr.file("main/.git/worktrees/feature/commondir", "../..\n")
			tr.file("main/.git/worktrees/feature/gitdir", tr.path("feature/.git")+"\n")
			tr.file("feature/.git", "gitdir: "+tr.path("main/.git/worktrees/feature")+"\n")
			return tr.resolve(tr.settings(WorkspaceWrite, NetworkAllow, "feature")), tr.base
		}},
		{name: "workspace-is-home", sockets: []string{".colima/default/docker.sock"},
			policy: func(t *testing.T) (ExecutionPolicy, string) {
				// The home directory as workspace: credentials and cordon's own
				// state lie inside the writable root, the session tmp inside the
				// hidden state directory.
				tr := newSeatbeltTree(t)
				tr.dirs(".ssh", ".config/cordon")
				return tr.resolve(tr.settings(WorkspaceWrite, NetworkAllow, ".")), tr.base
			}},
		{name: "macos-private-paths", policy: func(t *testing.T) (ExecutionPolicy, string) {
			// Paths as macOS resolves them (nothing here exists): a project
			// in the per-user temp dir, a read-deny entry under /etc.
			p := ExecutionPolicy{
				Mode:           WorkspaceWrite,
				WorkspaceRoot:  "/private/var/folders/zz/x1y2/T/project",
				Network:        NetworkAllow,
				TmpDir:         goldenHome + "/.local/state/cordon/tmp/0123abcd",
				ProtectedNames: []string{".git/hooks", ".git/config"},
				StateDir:       goldenHome + "/.local/state/cordon",
				ConfigDir:      goldenHome + "/.config/cordon",
			}
			p.WritableRoots = []string{p.WorkspaceRoot, "/private/tmp/build", p.TmpDir}
			p.ReadDeny = []string{goldenHome + "/.ssh", "/private/etc/cordon-secret", p.StateDir}
			p.Protected, _, _ = protectedList(p, Settings{}, nil, nil)
			return p, ""
		}},
	}
}

// renderSeatbelt is a golden file: the profile, then its parameters as
// comments, with the test's directory shown as goldenHome.
func renderSeatbelt(spec seatbeltSpec, base string) string {
	var b strings.Builder
	b.WriteString(spec.Profile)
	b.WriteString("\n; -D parameters, as sandbox-exec receives them:\n")
	for _, p := range spec.Params {
		v := p.Value
		if base != "" && (v == base || strings.HasPrefix(v, base+"/")) {
			v = goldenHome + strings.TrimPrefix(v, base)
		}
		b.WriteString(";   " + p.Key + "=" + v + "\n")
	}
	return b.String()
}

// The golden files (Seatbelt profiles, bwrap and Landlock argv) pin the
// launch's structure with a few entries of each data list standing in for
// all of them, so that adding a protected name or a read-deny entry (one
// line of data) changes no golden file. Every entry of the real data is
// checked apart: in the profile by TestSeatbeltCarriesTheLists, on Linux
// by the tests that plant each one (TestReadDenyEntryUnreadable,
// TestProtectedNamesPlantedAtAnyDepth).
var (
	goldenProtectedNames = []string{".cordon", ".bashrc", ".vscode", ".claude", ".mcp.json", ".config/git", ".hg/hgrc"}
	goldenReadDeny       = []string{".ssh", ".aws", ".netrc", ".config/op", ".claude/.credentials.json", ".claude.json"}
)

// withGoldenLists puts the stand-ins in place of the data lists for the
// rest of the test (which must not run in parallel with another).
func withGoldenLists(t *testing.T) {
	names, deny := DefaultProtectedNames, DefaultReadDeny
	DefaultProtectedNames, DefaultReadDeny = goldenProtectedNames, goldenReadDeny
	t.Cleanup(func() { DefaultProtectedNames, DefaultReadDeny = names, deny })
}

func TestSeatbeltGolden(t *testing.T) {
	withGoldenLists(t)
	for _, c := range seatbeltCases() {
		t.Run(c.name, func(t *testing.T) {
			spec, _, base := c.profile(t)
			got := renderSeatbelt(spec, base)
			golden := filepath.Join("testdata", "seatbelt", c.name+".sbpl")
			if *updateGolden {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./sandbox -run SeatbeltGolden -update to create it")
			assert.Equal(t, string(want), got, "profile changed: review it, then rerun with -update")
		})
	}
}

// TestSeatbeltCarriesTheLists: with the real data, every protected name
// is refused to writes at the top of the workspace (as itself, or by its
// first missing component), and every read-deny entry is refused to
// reads, by a rule of the profile the golden files pin.
func TestSeatbeltCarriesTheLists(t *testing.T) {
	tr := newSeatbeltTree(t)
	tr.project()
	tr.dirs("project/.claude", "project/.hg")
	set := tr.settings(WorkspaceWrite, NetworkAllow, "project")
	p := tr.resolve(set)
	spec, err := seatbeltProfile(p, callFacts{})
	require.NoError(t, err)
	keyOf := func(prefix, value string) string {
		for _, prm := range spec.Params {
			if strings.HasPrefix(prm.Key, prefix) && prm.Value == value {
				return prm.Key
			}
		}
		return ""
	}
	// block is the profile's text from the line holding start to the
	// next line indented no deeper than that line's rule.
	block := func(start, nextRule string) string {
		i := strings.Index(spec.Profile, start)
		require.GreaterOrEqual(t, i, 0, start)
		rest := spec.Profile[i+len(start):]
		if j := strings.Index(rest, nextRule); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	root := keyOf("ROOT_", p.WorkspaceRoot)
	require.NotEmpty(t, root)
	writes := block(`(subpath (param "`+root+`"))`, "\n  (")
	for _, name := range DefaultProtectedNames {
		// Named as itself if it exists, else by its first missing part.
		place := p.WorkspaceRoot
		for _, part := range strings.Split(name, "/") {
			place = filepath.Join(place, part)
			if _, err := os.Lstat(place); err != nil {
				break
			}
		}
		key := keyOf("PROTECTED_", place)
		if assert.NotEmpty(t, key, "protected name %s: no parameter for %s", name, place) {
			assert.Contains(t, writes, `(require-not (literal (param "`+key+`")))`, name)
			assert.Contains(t, writes, `(require-not (subpath (param "`+key+`")))`, name)
		}
	}
	reads := block("(allow file-read* file-test-existence file-map-executable", "\n(")
	for _, rel := range DefaultReadDeny {
		key := keyOf("READ_DENY_", filepath.Join(set.Home, filepath.FromSlash(rel)))
		if assert.NotEmpty(t, key, "read-deny entry ~/%s has no parameter", rel) {
			assert.Contains(t, reads, `(require-not (literal (param "`+key+`")))`, rel)
			assert.Contains(t, reads, `(require-not (subpath (param "`+key+`")))`, rel)
		}
	}
}

var sbplParamRE = regexp.MustCompile(`\(param "([^"]*)"\)`)

// TestSeatbeltProfileIsWellFormed checks what sandbox-exec would reject or
// misread, on every platform: unbalanced parentheses, a parameter used but
// not passed (an "unbound" error) or passed but not used, a malformed key.
func TestSeatbeltProfileIsWellFormed(t *testing.T) {
	for _, c := range seatbeltCases() {
		t.Run(c.name, func(t *testing.T) {
			spec, _, _ := c.profile(t)
			assert.True(t, strings.HasPrefix(spec.Profile, "(version 1)\n"))
			assertBalanced(t, spec.Profile)
			used := map[string]bool{}
			for _, m := range sbplParamRE.FindAllStringSubmatch(spec.Profile, -1) {
				used[m[1]] = true
			}
			keys := map[string]bool{}
			for _, prm := range spec.Params {
				assert.Regexp(t, `^[A-Z][A-Z0-9_]*$`, prm.Key)
				assert.False(t, keys[prm.Key], "key %s defined twice", prm.Key)
				keys[prm.Key] = true
				assert.True(t, used[prm.Key], "parameter %s is passed but never used", prm.Key)
				assert.True(t, filepath.IsAbs(prm.Value), "%s=%s", prm.Key, prm.Value)
			}
			for k := range used {
				assert.True(t, keys[k], "the profile uses (param %q) but it is not passed", k)
			}
			args := spec.args()
			require.Equal(t, "-p", args[0])
			assert.Equal(t, spec.Profile, args[1])
			assert.Len(t, args, 2+len(spec.Params))
		})
	}
}

// assertBalanced walks SBPL as its reader does: ; comments to the end of
// the line, "strings" and #"regexes" with backslash escapes.
func assertBalanced(t *testing.T, profile string) {
	t.Helper()
	depth := 0
	for i := 0; i < len(profile); i++ {
		switch c := profile[i]; {
		case c == ';':
			for i < len(profile) && profile[i] != '\n' {
				i++
			}
		case c == '"':
			for i++; i < len(profile) && profile[i] != '"'; i++ {
				if profile[i] == '\\' {
					i++
				}
			}
			require.Less(t, i, len(profile), "unterminated string")
		case c == '(':
			depth++
		case c == ')':
			depth--
			require.GreaterOrEqual(t, depth, 0, "unbalanced ) at byte %d", i)
		}
	}
	assert.Zero(t, depth, "unclosed (")
}

// TestSeatbeltPathsCannotBreakOut: paths reach sandbox-exec only as -D
// values, so a workspace whose name is an SBPL injection yields exactly
// the profile text that a plain name does, and its -D value carries the
// name unchanged.
func TestSeatbeltPathsCannotBreakOut(t *testing.T) {
	hostile := "we\"ird\\ name\")) (allow default) ; (allow file-write* (subpath \"/\"))\n(deny\t=x"
	profileFor := func(name string) (seatbeltSpec, ExecutionPolicy) {
		tr := newSeatbeltTree(t)
		tr.dirs(name+"/.git/hooks", ".ssh")
		tr.file(name+"/.git/config", "")
		set := tr.settings(WorkspaceWrite, NetworkAllow, name)
		set.ExtraReadDeny = []string{tr.path(name + "/\"secret\\")}
		p := tr.resolve(set)
		spec, err := seatbeltProfile(p, callFacts{})
		require.NoError(t, err)
		return spec, p
	}
	plain, _ := profileFor("project")
	weird, p := profileFor(hostile)
	assert.Equal(t, plain.Profile, weird.Profile, "a path changed the profile text")
	assert.NotContains(t, weird.Profile, "(allow default)")
	assert.NotContains(t, weird.Profile, "we\"ird")

	args := weird.args()
	var got []string
	for _, a := range args[2:] {
		require.True(t, strings.HasPrefix(a, "-D"))
		key, value, ok := strings.Cut(strings.TrimPrefix(a, "-D"), "=")
		require.True(t, ok)
		assert.NotContains(t, key, "=")
		got = append(got, value)
	}
	assert.Contains(t, got, p.WorkspaceRoot, "the workspace reaches sandbox-exec byte for byte")
	assert.Contains(t, got, filepath.Join(p.WorkspaceRoot, "\"secret\\"))
	assert.Contains(t, got, filepath.Join(p.WorkspaceRoot, ".git", "hooks"))
}

func TestSeatbeltRefusesWhatItCannotExpress(t *testing.T) {
	_, err := seatbeltProfile(ExecutionPolicy{Mode: ReadOnly, ReadDeny: []string{"/Users/dev/.ss\x00h"}}, callFacts{})
	assert.ErrorContains(t, err, "NUL byte")
	_, err = seatbeltProfile(ExecutionPolicy{Mode: ReadOnly}, callFacts{dockerSockets: []string{"/var/run/\x00docker.sock"}})
	assert.ErrorContains(t, err, "NUL byte")
	assert.Panics(t, func() {
		seatbeltProfile(ExecutionPolicy{Mode: ReadOnly, ReadDeny: []string{"relative/.ssh"}}, callFacts{})
	}, "a relative path would silently match nothing: a broken invariant")

	// A protected path through a symlink is refused, not followed.
	tr := newSeatbeltTree(t)
	tr.dirs("project", "elsewhere")
	require.NoError(t, os.Symlink(tr.path("elsewhere"), tr.path("project/.git")))
	p := tr.resolve(tr.settings(WorkspaceWrite, NetworkAllow, "project"))
	_, err = seatbeltProfile(p, callFacts{})
	assert.ErrorIs(t, err, errProtectedSymlink)
}

// TestSeatbeltNeverConfinesDanger: a danger-full-access policy cannot be
// turned into a confined one, and the generator refuses it on its own too.
func TestSeatbeltNeverConfinesDanger(t *testing.T) {
	danger := ExecutionPolicy{Mode: DangerFullAccess, WritableRoots: []string{"/"}}
	_, err := danger.ToConfined()
	assert.ErrorIs(t, err, errDangerNotConfinable)
	_, err = seatbeltProfile(danger, callFacts{})
	assert.ErrorIs(t, err, errDangerNotConfinable)
	_, err = seatbeltProfile(ExecutionPolicy{Mode: "bogus"}, callFacts{})
	assert.ErrorContains(t, err, `mode "bogus"`)
}

func TestSeatbeltRules(t *testing.T) {
	p := ExecutionPolicy{Mode: WorkspaceWrite, WorkspaceRoot: "/Users/dev/p", WritableRoots: []string{"/Users/dev/p"}, Network: NetworkDeny}
	spec, err := seatbeltProfile(p, callFacts{dockerSockets: []string{"/Users/dev/p/docker.sock"}})
	require.NoError(t, err)
	assertBalanced(t, spec.Profile)
	assert.Contains(t, spec.Profile, "(deny default)")
	assert.Contains(t, spec.Profile, "(allow file-read* file-test-existence file-map-executable)", "no read-deny list: everything readable")
	assert.Contains(t, spec.Profile, "(deny file-link)")
	assert.NotContains(t, spec.Profile, "(allow network", "network deny allows no network operation")
	assert.NotContains(t, spec.Profile, "SOCKET_", "with the network off every socket is refused already")
	assert.NotContains(t, spec.Profile, "(allow file-ioctl)", "no blanket ioctl: TIOCSTI")
	assert.NotContains(t, spec.Profile, "launchservices", "no service that launches programs")

	p.Network = NetworkAllow
	spec, err = seatbeltProfile(p, callFacts{dockerSockets: []string{"/Users/dev/p/docker.sock"}})
	require.NoError(t, err)
	assertBalanced(t, spec.Profile)
	assert.Contains(t, spec.Profile, "(allow network*)")
	assert.Contains(t, spec.Profile, `(remote unix-socket (subpath (param "SOCKET_0")))`)
	assert.Contains(t, spec.Params, seatbeltParam{Key: "SOCKET_0", Value: "/Users/dev/p/docker.sock"})
}

func TestSeatbeltAlias(t *testing.T) {
	for path, want := range map[string]string{
		"/private/var/folders/x/T": "/var/folders/x/T",
		"/private/tmp":             "/tmp",
		"/private/etc/hosts":       "/etc/hosts",
		"/private/tmpfoo":          "",
		"/private/Users/x":         "",
		"/tmp/x":                   "",
		"/Users/dev":               "",
	} {
		assert.Equal(t, want, seatbeltAlias(path), path)
	}
}

func TestSeatbeltRunnerRules(t *testing.T) {
	cases := []struct {
		code   int
		stderr string
		runner bool
	}{
		{65, "sandbox-exec: unbound variable: setenv at <input string>, line 5\n", true},
		{71, "sandbox-exec: sandbox_apply: Operation not permitted\n", true},
		{71, "sandbox-exec: execvp() of 'nosuch' failed: No such file or directory\n", true},
		{1, "sandbox-exec: unbound variable: x\n", false},
		{65, "make: *** [all] Error 65\n", false},
		{0, "sandbox-exec: warning\n", false},
	}
	for _, c := range cases {
		_, ok := matchAny(seatbeltRunnerRules, c.code, c.stderr)
		assert.Equal(t, c.runner, ok, "%d %q", c.code, c.stderr)
	}
	assert.True(t, looksDenied(seatbeltDenialSignatures, "sh: /Users/dev/x: Operation not permitted"))
	assert.True(t, looksDenied(seatbeltDenialSignatures, "Sandbox: sh(42) deny(1) file-write-create /Users/dev/x"))
	assert.False(t, looksDenied(seatbeltDenialSignatures, "Permission denied"), "EACCES is ordinary permissions, not Seatbelt")
}

// TestSeatbeltEnforces runs the real backend on macOS: the generated
// profile must load, and every rule must hold against a real command.
func TestSeatbeltEnforces(t *testing.T) {
	if runtime.GOOS != "darwin" {
		t.Skip("Seatbelt runs on macOS only; the profile itself is checked by the golden tests")
	}
	prov := byName("seatbelt")
	require.NotNil(t, prov)
	require.NoError(t, prov.Available())
	res := probeBackend(prov, "")
	require.True(t, res.OK, res.Reason)

	tr := newSeatbeltTree(t)
	tr.project()
	tr.file("outside.txt", "original\n")
	weird := "weird \"dir\\\n) (allow default)"
	tr.dirs(weird)
	set := tr.settings(WorkspaceWrite, NetworkDeny, "project")
	set.ExtraWriteAllow = []string{tr.path(weird)}
	p := tr.resolve(set)
	cp, err := p.ToConfined()
	require.NoError(t, err)
	// Scripts get the tree as $1 and the oddly named root as $2: paths
	// travel as arguments, never inside the script's quotes.
	run := func(script string) (string, error) {
		c, err := prov.Confine([]string{"/bin/sh", "-c", script, "sh", tr.base, tr.path(weird)}, cp)
		require.NoError(t, err)
		cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
		cmd.Dir = p.WorkspaceRoot
		cmd.Env = mergeEnv(Environ(os.Environ(), nil), c.Env)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	allowed := []string{
		`echo ok > "$1/project/src/new.txt"`,
		`echo ok > "$TMPDIR/t" && cat "$TMPDIR/t"`,
		`echo ok > /dev/null`,
		`mkdir -p "$1/project/.git/objects/ab" && mv "$1/project/src" "$1/project/src2"`,
		`echo ok > "$2/f"`,
	}
	for _, s := range allowed {
		out, err := run(s)
		assert.NoError(t, err, "%s: %s", s, out)
	}
	denied := []string{
		`echo x >> "$1/outside.txt"`,
		`echo x > "$1/project/.git/hooks/pre-commit"`,
		`echo x >> "$1/project/.git/config"`,
		`echo x > "$1/project/.bashrc"`,
		`mkdir "$1/project/.cordon"`,
		`mv "$1/project/.git" "$1/project/git-moved"`,
		`cat "$1/.ssh/id_ed25519"`,
		`ln "$1/outside.txt" "$1/project/alias"`,
		`echo x > "$1/.local/state/cordon/other"`,
		`echo x > "$2/.bashrc"`,
		`/usr/bin/nc -z -w 2 1.1.1.1 443`,
	}
	for _, s := range denied {
		out, err := run(s)
		assert.Error(t, err, "%s must be refused: %s", s, out)
	}
	data, _ := os.ReadFile(tr.path("outside.txt"))
	assert.Equal(t, "original\n", string(data))
	for _, rel := range []string{"project/.git/hooks/pre-commit", "project/.bashrc", "project/.cordon", "project/alias"} {
		_, err := os.Lstat(tr.path(rel))
		assert.True(t, os.IsNotExist(err), "%s was created", rel)
	}
}
