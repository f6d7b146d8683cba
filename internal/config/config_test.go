package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opt is what one file sets for one key: whether it sets it, its value
// and the line of the key.
type opt[T any] struct {
	Set   bool
	Value T
	Line  int
}

func optOf[T comparable](l *layer, k *Key[T]) opt[T] {
	v, ok := l.vals[k]
	if !ok {
		return opt[T]{}
	}
	return opt[T]{true, v.v.(T), v.line}
}

func listOf(l *layer, k *ListKey) opt[[]string] {
	v, ok := l.vals[k]
	if !ok {
		return opt[[]string]{}
	}
	return opt[[]string]{true, v.v.([]string), v.line}
}

// flags parses a command line's flags, by name with their argument.
func flags(t *testing.T, given map[string]string) Flags {
	t.Helper()
	f, err := ParseFlags(given)
	require.NoError(t, err)
	return f
}

// exampleConfig is SPEC §8's example file, plus dangerous_commands.
const exampleConfig = `preset = "review"              # safe | review | danger
mode = "workspace-write"       # read-only | workspace-write | danger-full-access
approval = "ask-dangerous"     # never | on-request | ask-dangerous | always
sandbox = "required"           # required | auto | off
backend = "auto"               # auto | bwrap | landlock | seatbelt
network = "allow"              # allow | deny
fallback_root = "/srv/agent"
extra_write_allow = ["~/.cache/go-build"]   # must start with / or ~/
extra_read_deny = ["~/company-secrets"]
protected_paths = ["deploy/keys"]           # relative to each writable root
env_passthrough = ["GOPATH"]                # a bare "*" is an error
dangerous_commands = ["kubectl delete # deletes cluster resources"]
approval_timeout = "5m"

[bash]
timeout = "2m"
max_output_chars = 30000

[processes]
max = 16
max_buffer_chars = 1000000

[profiles.mcp_server]          # spawn class of ` + "`cordon wrap`" + `
network = "restricted"         # replaces the global value for this class
allowed_domains = ["api.github.com"]
extra_write_allow = []

[http]
addr = "127.0.0.1:8765"
allowed_origins = []
`

func TestParseConfigExample(t *testing.T) {
	fc, err := parseFile("c.toml", []byte(exampleConfig))
	require.NoError(t, err)
	assert.Equal(t, opt[approval.Preset]{true, approval.Review, 1}, optOf(fc, Preset))
	assert.Equal(t, opt[sandbox.Mode]{true, sandbox.WorkspaceWrite, 2}, optOf(fc, Mode))
	assert.Equal(t, opt[sandbox.Requirement]{true, sandbox.Required, 4}, optOf(fc, Sandbox))
	assert.Equal(t, opt[string]{true, "/srv/agent", 7}, optOf(fc, FallbackRoot))
	assert.Equal(t, opt[[]string]{true, []string{"~/.cache/go-build"}, 8}, listOf(fc, ExtraWriteAllow))
	assert.Equal(t, opt[[]string]{true, []string{"deploy/keys"}, 10}, listOf(fc, ProtectedPaths))
	assert.Equal(t, 12, listOf(fc, DangerousCommands).Line)
	assert.Equal(t, opt[time.Duration]{true, 5 * time.Minute, 13}, optOf(fc, ApprovalTimeout))
	assert.Equal(t, opt[time.Duration]{true, 2 * time.Minute, 16}, optOf(fc, BashTimeout))
	assert.Equal(t, opt[int]{true, 30000, 17}, optOf(fc, MaxOutputChars))
	assert.Equal(t, opt[int]{true, 16, 20}, optOf(fc, ProcessesMax))
	assert.Equal(t, opt[sandbox.Network]{true, sandbox.NetworkRestricted, 24}, optOf(fc, MCPServerNetwork))
	assert.Equal(t, opt[[]string]{true, []string{"api.github.com"}, 25}, listOf(fc, MCPServerAllowedDomains))
	assert.Equal(t, opt[string]{true, "127.0.0.1:8765", 29}, optOf(fc, HTTPAddr))
	assert.Equal(t, opt[[]string]{true, []string{}, 30}, listOf(fc, AllowedOrigins))
}

func TestParseConfigErrors(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"unknown key", "mode = \"read-only\"\nmdoe = \"x\"\n", `c.toml:2: mdoe: unknown key (did you mean "mode"?)`},
		{"keys are case-sensitive", "MODE = \"danger-full-access\"\n", `c.toml:1: MODE: unknown key (did you mean "mode"?)`},
		{"unknown table key", "[bash]\ntimeot = \"1m\"\n", `c.toml:2: bash.timeot: unknown key (did you mean "timeout"?)`},
		{"unknown table", "\n[foo]\nx = 1\n", `c.toml:2: foo: unknown key`},
		{"unknown dotted key", "foo.bar = 1\n", `c.toml:1: foo: unknown key`},
		{"wrong type", "mode = 3\n", `c.toml:1: mode: must be a string, e.g. mode = "workspace-write"; this is the integer 3`},
		{"wrong list type", "extra_read_deny = \"~/x\"\n", `c.toml:1: extra_read_deny: must be an array of strings`},
		{"wrong entry type", "protected_paths = [\"a\", 2]\n", `c.toml:1: protected_paths: entry 2 must be a string`},
		{"inline table value", "network = {a = 1}\n", `c.toml:1: network: must be a string`},
		{"dotted key under a value", "\nmode.x = 1\n", `c.toml:2: mode: must be a string, e.g. mode = "workspace-write"; this is a table`},
		{"dotted key under a table value", "[bash]\ntimeout.x = 1\n", `c.toml:2: bash.timeout: must be a duration string`},
		{"table is not a table", "bash = \"2m\"\n", `c.toml:1: bash: must be a table`},
		{"array of tables", "[[http]]\naddr = \"127.0.0.1:1\"\n", `c.toml:1: http: must be a table`},
		{"unknown mode", "\nmode = \"everything\"\n", `c.toml:2: mode: unknown mode "everything": use one of read-only, workspace-write, danger-full-access`},
		{"unknown preset", "preset = \"yolo\"\n", `c.toml:1: preset: unknown preset "yolo"`},
		{"custom preset", "preset = \"custom\"\n", `c.toml:1: preset: preset "custom" cannot be chosen`},
		{"unknown approval", "approval = \"sometimes\"\n", `c.toml:1: approval: unknown approval policy "sometimes"`},
		{"unknown sandbox", "sandbox = \"maybe\"\n", `c.toml:1: sandbox: unknown sandbox setting "maybe": use required, auto or off`},
		{"unknown backend", "backend = \"docker\"\n", `c.toml:1: backend: unknown backend "docker"`},
		{"unknown network", "network = \"some\"\n", `c.toml:1: network: unknown network setting "some"`},
		{"bad duration", "approval_timeout = \"5 minutes\"\n", `c.toml:1: approval_timeout: "5 minutes" is not a duration`},
		{"integer duration", "approval_timeout = 300\n", `c.toml:1: approval_timeout: must be a duration string`},
		{"negative duration", "[bash]\ntimeout = \"-1m\"\n", `c.toml:2: bash.timeout: "-1m" must be positive`},
		{"zero duration", "approval_timeout = \"0s\"\n", `c.toml:1: approval_timeout: "0s" must be positive`},
		{"bash timeout too long", "bash.timeout = \"1h\"\n", `c.toml:1: bash.timeout: "1h" is longer than the maximum 10m0s`},
		{"negative number", "[bash]\nmax_output_chars = -5\n", `c.toml:2: bash.max_output_chars: -5 must be a positive number`},
		{"float number", "[bash]\nmax_output_chars = 1.5\n", `c.toml:2: bash.max_output_chars: must be an integer`},
		{"relative extra_write_allow", "extra_write_allow = [\"/ok\", \"rel/dir\"]\n", `c.toml:1: extra_write_allow: entry 2 ("rel/dir"): must start with / or ~/`},
		{"tilde user", "extra_read_deny = [\"~bob/x\"]\n", `c.toml:1: extra_read_deny: entry 1 ("~bob/x"): must start with / or ~/`},
		{"relative fallback_root", "fallback_root = \"srv\"\n", `c.toml:1: fallback_root: must start with / or ~/`},
		{"absolute protected path", "protected_paths = [\"/etc\"]\n", `c.toml:1: protected_paths: entry 1 ("/etc"): must be relative to each writable root`},
		{"dotdot protected path", "protected_paths = [\"a/../../b\"]\n", `c.toml:1: protected_paths: entry 1 ("a/../../b"): must stay inside the writable root`},
		{"root protected path", "protected_paths = [\"./\"]\n", `c.toml:1: protected_paths: entry 1 ("./"): names the writable root itself`},
		{"env star", "env_passthrough = [\"*\"]\n", `c.toml:1: env_passthrough: entry 1 ("*"): a bare "*" would pass every variable`},
		{"env pattern", "env_passthrough = [\"AWS_*\"]\n", `c.toml:1: env_passthrough: entry 1 ("AWS_*"): patterns are not supported`},
		{"env value", "env_passthrough = [\"A=1\"]\n", `c.toml:1: env_passthrough: entry 1 ("A=1"): name the variable without a value`},
		{"env empty", "env_passthrough = [\"\"]\n", `c.toml:1: env_passthrough: entry 1 (""): empty name`},
		{"bad rule", "dangerous_commands = [\"git push\", \"-rf\"]\n", `c.toml:1: dangerous_commands: rule 2:`},
		{"bad addr", "[http]\naddr = \"localhost\"\n", `c.toml:2: http.addr: "localhost" is not HOST:PORT`},
		{"bad origin", "[http]\nallowed_origins = [\"localhost:3000\"]\n", `c.toml:2: http.allowed_origins: entry 1 ("localhost:3000"): is not an origin`},
		{"wildcard origin", "http.allowed_origins = [\"*\"]\n", `c.toml:1: http.allowed_origins: entry 1 ("*"): a wildcard`},
		{"syntax", "mode = \"read-only\n", `c.toml:1: mode: TOML syntax error: strings cannot contain newlines`},
		{"duplicate key", "mode = \"read-only\"\nmode = \"read-only\"\n", `c.toml:2: mode: TOML syntax error: Key 'mode' has already been defined; fix the syntax`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseFile("c.toml", []byte(c.doc))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestParseConfigReportsEveryProblem: one run names them all, in line order.
func TestParseConfigReportsEveryProblem(t *testing.T) {
	_, err := parseFile("c.toml", []byte("network = 1\nfoo = 2\n[bash]\ntimeout = \"x\"\n"))
	require.Error(t, err)
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 4, err.Error())
	assert.Contains(t, lines[1], "c.toml:1: network:")
	assert.Contains(t, lines[2], "c.toml:2: foo:")
	assert.Contains(t, lines[3], "c.toml:4: bash.timeout:")
}

// layers writes the user, workspace and --config files of a test and
// returns the sources that read them.
type layers struct {
	t                  *testing.T
	home, ws, explicit string
}

func newLayers(t *testing.T) *layers {
	base := t.TempDir()
	l := &layers{t: t, home: filepath.Join(base, "home"), ws: filepath.Join(base, "ws")}
	require.NoError(t, os.MkdirAll(filepath.Join(l.home, ".config", "cordon"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(l.ws, ".cordon"), 0o755))
	t.Setenv("XDG_CONFIG_HOME", "")
	return l
}

func (l *layers) user(doc string) *layers {
	return l.write(filepath.Join(l.home, ".config", "cordon", "config.toml"), doc)
}

func (l *layers) workspace(doc string) *layers {
	return l.write(filepath.Join(l.ws, "cordon.toml"), doc)
}

func (l *layers) dotCordon(doc string) *layers {
	return l.write(filepath.Join(l.ws, ".cordon", "config.toml"), doc)
}

func (l *layers) config(doc string) *layers {
	l.explicit = filepath.Join(filepath.Dir(l.ws), "explicit.toml")
	return l.write(l.explicit, doc)
}

func (l *layers) write(path, doc string) *layers {
	require.NoError(l.t, os.WriteFile(path, []byte(doc), 0o644))
	return l
}

func (l *layers) load(flags Flags) *Config {
	l.t.Helper()
	c, err := l.sources(flags).Load()
	require.NoError(l.t, err)
	return c
}

func (l *layers) sources(flags Flags) Sources {
	return Sources{Home: l.home, Workspace: Value[string]{l.ws, FlagOrigin("--workspace")}, Explicit: l.explicit, Flags: flags}
}

func warningKeys(c *Config) []string {
	var keys []string
	for _, w := range c.Warnings {
		keys = append(keys, w.Key)
	}
	return keys
}

// TestWorkspaceOnlyTightens walks the tighten table: what a workspace file
// may change, and what it may not.
func TestWorkspaceOnlyTightens(t *testing.T) {
	user := `mode = "workspace-write"
approval = "on-request"
sandbox = "auto"
network = "deny"
backend = "bwrap"
fallback_root = "/srv/agent"
extra_read_deny = ["~/a"]
protected_paths = ["p"]
dangerous_commands = ["kubectl delete"]
env_passthrough = ["GOPATH"]
approval_timeout = "2m"
[bash]
timeout = "1m"
max_output_chars = 1000
[http]
addr = "127.0.0.1:1"
`
	t.Run("widenings are dropped", func(t *testing.T) {
		l := newLayers(t).user(user).workspace(`mode = "danger-full-access"
approval = "never"
sandbox = "off"
network = "allow"
backend = "landlock"
fallback_root = "/"
extra_write_allow = ["/"]
env_passthrough = ["AWS_SECRET_ACCESS_KEY"]
approval_timeout = "1h"
[bash]
timeout = "5m"
max_output_chars = 99999
[http]
addr = "0.0.0.0:80"
allowed_origins = ["http://evil.example"]
`)
		c := l.load(Flags{})
		assert.Equal(t, sandbox.WorkspaceWrite, Mode.Get(c))
		assert.Equal(t, approval.OnRequest, Approval.Get(c))
		assert.Equal(t, sandbox.Auto, Sandbox.Get(c))
		assert.Equal(t, sandbox.NetworkDeny, Network.Get(c))
		assert.Equal(t, "bwrap", Backend.Get(c))
		assert.Equal(t, "/srv/agent", FallbackRoot.Get(c))
		assert.Empty(t, ExtraWriteAllow.Of(c).Entries)
		assert.Equal(t, []string{"GOPATH"}, EnvPassthrough.Get(c))
		assert.Equal(t, 2*time.Minute, ApprovalTimeout.Get(c))
		assert.Equal(t, time.Minute, BashTimeout.Get(c))
		assert.Equal(t, 1000, MaxOutputChars.Get(c))
		assert.Equal(t, "127.0.0.1:1", HTTPAddr.Get(c))
		assert.Empty(t, AllowedOrigins.Of(c).Entries)
		assert.Equal(t, []string{"mode", "approval", "sandbox", "network", "backend", "fallback_root", "extra_write_allow",
			"env_passthrough", "approval_timeout", "bash.timeout", "bash.max_output_chars", "http.addr", "http.allowed_origins"}, warningKeys(c))
		for i, w := range c.Warnings {
			assert.Equal(t, filepath.Join(l.ws, "cordon.toml"), w.File)
			assert.Positive(t, w.Line, w.Key)
			if i > 0 {
				assert.GreaterOrEqual(t, w.Line, c.Warnings[i-1].Line)
			}
		}
		assert.Equal(t, Origin{Source: SourceUser, File: filepath.Join(l.home, ".config", "cordon", "config.toml"), Line: 4}, Network.Of(c).Origin)
	})
	t.Run("tightenings apply", func(t *testing.T) {
		l := newLayers(t).user(user).workspace(`mode = "read-only"
approval = "always"
sandbox = "required"
network = "deny"
backend = "bwrap"
extra_read_deny = ["~/b", "~/a"]
protected_paths = ["q"]
dangerous_commands = ["terraform destroy"]
extra_write_allow = []
approval_timeout = "30s"
[bash]
timeout = "10s"
max_output_chars = 10
`)
		c := l.load(Flags{})
		assert.Empty(t, c.Warnings)
		ws := Origin{Source: SourceWorkspace, File: filepath.Join(l.ws, "cordon.toml"), Line: 1}
		assert.Equal(t, Value[sandbox.Mode]{sandbox.ReadOnly, ws}, Mode.Of(c))
		assert.Equal(t, approval.Always, Approval.Get(c))
		assert.Equal(t, sandbox.Required, Sandbox.Get(c))
		assert.Equal(t, []string{"~/a", "~/b"}, ExtraReadDeny.Get(c), "a workspace adds read denials, never removes them")
		assert.Equal(t, []string{"p", "q"}, ProtectedPaths.Get(c))
		assert.Equal(t, []string{"kubectl delete", "terraform destroy"}, DangerousCommands.Get(c))
		assert.Equal(t, SourceUser, ExtraReadDeny.Of(c).Entries[0].Origin.Source)
		assert.Equal(t, SourceWorkspace, ExtraReadDeny.Of(c).Entries[1].Origin.Source)
		assert.Equal(t, 30*time.Second, ApprovalTimeout.Get(c))
		assert.Equal(t, 10*time.Second, BashTimeout.Get(c))
		assert.Equal(t, 10, MaxOutputChars.Get(c))
		assert.Len(t, c.Rules, len(approval.DefaultRules())+2)
	})
	t.Run("a preset counts through its mode and approval", func(t *testing.T) {
		c := newLayers(t).workspace(`preset = "danger"`).load(Flags{})
		assert.Equal(t, sandbox.WorkspaceWrite, c.Derived.Mode)
		assert.Equal(t, approval.AskDangerous, c.Derived.Approval)
		assert.Equal(t, approval.Review, c.Derived.Preset)
		assert.Equal(t, []string{"preset", "preset"}, warningKeys(c))

		c = newLayers(t).user(`preset = "danger"`).workspace(`preset = "safe"`).load(Flags{})
		assert.Equal(t, approval.DerivedState{Mode: sandbox.ReadOnly, Approval: approval.AskDangerous, Preset: approval.Safe}, c.Derived)
		assert.Empty(t, c.Warnings)
	})
	t.Run("both workspace files, cordon.toml first", func(t *testing.T) {
		l := newLayers(t).workspace(`mode = "read-only"`).dotCordon(`mode = "workspace-write"
network = "deny"`)
		c := l.load(Flags{})
		assert.Equal(t, sandbox.ReadOnly, Mode.Get(c), ".cordon/config.toml cannot undo cordon.toml's narrowing")
		assert.Equal(t, sandbox.NetworkDeny, Network.Get(c))
		assert.Equal(t, []string{"mode"}, warningKeys(c))
		assert.Len(t, c.Files, 2)
	})
}

func TestTrustedLayersAndFlags(t *testing.T) {
	l := newLayers(t).user(`mode = "read-only"
network = "deny"
extra_read_deny = ["~/a"]
`).workspace(`mode = "read-only"`).config(`preset = "danger"
extra_read_deny = ["~/b"]
`)
	c := l.load(Flags{})
	assert.Equal(t, approval.DerivedState{Mode: sandbox.DangerFullAccess, Approval: approval.Never, Preset: approval.Danger}, c.Derived,
		"--config is trusted: it may widen over the workspace file")
	assert.Equal(t, []string{"~/b"}, ExtraReadDeny.Get(c), "a trusted layer replaces a list")
	assert.Equal(t, SourceConfig, Preset.Of(c).Origin.Source)

	c = l.load(flags(t, map[string]string{"--mode": "workspace-write", "--network": "allow", "--no-sandbox": "true"}))
	assert.Equal(t, Value[sandbox.Mode]{sandbox.WorkspaceWrite, FlagOrigin("--mode")}, Mode.Of(c))
	assert.Equal(t, approval.Custom, c.Derived.Preset, "danger's approval with workspace-write is no preset")
	assert.Equal(t, Value[sandbox.Network]{sandbox.NetworkAllow, FlagOrigin("--network")}, Network.Of(c))
	assert.Equal(t, Value[sandbox.Requirement]{sandbox.Off, FlagOrigin("--no-sandbox")}, Sandbox.Of(c))

	c = l.load(flags(t, map[string]string{"--preset": "safe"}))
	assert.Equal(t, approval.DerivedState{Mode: sandbox.ReadOnly, Approval: approval.AskDangerous, Preset: approval.Safe}, c.Derived)
}

// FuzzConfig feeds arbitrary bytes to the parser: it must never panic, a
// rejection must name the file, and an accepted file must load as every
// layer without panicking.
func FuzzConfig(f *testing.F) {
	f.Add([]byte(exampleConfig))
	f.Add([]byte("mode = \"read-only\"\n[bash]\ntimeout = \"1m\"\n"))
	f.Add([]byte("bash.timeout = \"1m\"\nhttp = {addr = \"127.0.0.1:1\"}\n"))
	f.Add([]byte("[[bash]]\n[foo.bar]\nx = [{a = 1}]\n"))
	f.Add([]byte("preset = \"safe\"\nprotected_paths = [\"a/b\", \"../c\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fc, err := parseFile("fuzz.toml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.toml") && !strings.Contains(err.Error(), "\n  fuzz.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		// The TOML parser skips a byte-order mark, UTF-16's included;
		// everything after it must be UTF-8.
		text := string(data)
		for _, bom := range []string{"\xef\xbb\xbf", "\xff\xfe", "\xfe\xff"} {
			text = strings.TrimPrefix(text, bom)
		}
		if !utf8.ValidString(text) {
			t.Fatalf("accepted invalid UTF-8")
		}
		for _, source := range []Source{SourceUser, SourceWorkspace} {
			c := defaultConfig()
			c.override(fc, SourceUser)
			if source == SourceWorkspace {
				c.tighten(fc)
			}
			if err := c.finish(); err != nil {
				t.Fatalf("accepted a file that does not load: %v", err)
			}
			c.Settings()
		}
	})
}

// TestWorkspaceNarrowsTheNetwork: allow → restricted → deny only, an allow
// list only shrinks (entries the user's covers), a deny list only grows.
func TestWorkspaceNarrowsTheNetwork(t *testing.T) {
	user := "network = \"allow\"\nallowed_domains = [\"*.example.com\", \"github.com\"]\ndenied_domains = [\"bad.test\"]\n"
	cfg := newLayers(t).user(user).workspace("network = \"restricted\"\nallowed_domains = [\"api.example.com\", \"evil.test\"]\ndenied_domains = [\"worse.test\"]\n").load(Flags{})
	assert.Equal(t, "restricted", string(Network.Get(cfg)))
	assert.Equal(t, []string{"api.example.com"}, AllowedDomains.Get(cfg), "evil.test would widen the list")
	assert.Equal(t, []string{"bad.test", "worse.test"}, DeniedDomains.Get(cfg))
	assert.Equal(t, []string{"allowed_domains"}, warningKeys(cfg))

	cfg = newLayers(t).user("network = \"restricted\"\n").workspace("network = \"allow\"\n").load(Flags{})
	assert.Equal(t, "restricted", string(Network.Get(cfg)), "a workspace cannot open the network")
	assert.Equal(t, []string{"network"}, warningKeys(cfg))

	cfg = newLayers(t).user(user).workspace("allowed_domains = []\n").load(Flags{})
	assert.Empty(t, AllowedDomains.Get(cfg), "an empty list narrows to nothing")
}

// TestProfilesTables: the spawn classes' keys as nested tables, with the
// errors a human makes in them.
func TestProfilesTables(t *testing.T) {
	l, err := parseFile("c.toml", []byte("[profiles.mcp_server]\nnetwork = \"restricted\"\nallowed_domains = [\"api.github.com\"]\n\n[profiles.external_agent]\nnetwork = \"deny\"\n"))
	require.NoError(t, err)
	assert.Equal(t, sandbox.NetworkRestricted, l.vals[MCPServerNetwork].v)
	assert.Equal(t, []string{"api.github.com"}, l.vals[MCPServerAllowedDomains].v)
	assert.Equal(t, sandbox.NetworkDeny, l.vals[AgentNetwork].v)

	_, err = parseFile("c.toml", []byte("[profiles.mcp_server]\nnetwrok = \"deny\"\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "c.toml:2: profiles.mcp_server.netwrok: unknown key")
	_, err = parseFile("c.toml", []byte("[profiles]\nmcp_server = 3\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "c.toml:2: profiles.mcp_server: must be a table")
	_, err = parseFile("c.toml", []byte("[profiles.daemon]\nnetwork = \"deny\"\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "profiles.daemon")
}
