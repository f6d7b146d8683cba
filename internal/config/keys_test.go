package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyCases take every key through the parser, the layers, status and the
// SIGHUP diff, one row per key: values are TOML, as a file writes them.
// A key without a row fails TestEveryKey.
var keyCases = []struct {
	key string
	// user is a value of the user's file; text and json are what status
	// prints for it (json as JSON).
	user, text, json string
	// tighter is a value a workspace file may set over user, and the text
	// status prints then; "" when nothing tightens the key.
	tighter, tighterText string
	// wider is a value a workspace file may not set over user; "" when
	// nothing widens the key.
	wider string
	// bad is a value the key refuses, and the start of why.
	bad, badErr string
}{
	{"preset", `"safe"`, "safe", `"safe"`, `"safe"`, "safe", `"danger"`, `"custom"`, `preset "custom" cannot be chosen`},
	{"mode", `"read-only"`, "read-only", `"read-only"`, `"read-only"`, "read-only", `"workspace-write"`, `"all"`, `unknown mode "all"`},
	{"approval", `"on-request"`, "on-request", `"on-request"`, `"always"`, "always", `"never"`, `"sometimes"`, `unknown approval policy "sometimes"`},
	{"sandbox", `"auto"`, "auto", `"auto"`, `"required"`, "required", `"off"`, `"maybe"`, `unknown sandbox setting "maybe"`},
	{"backend", `"bwrap"`, "bwrap", `"bwrap"`, `"bwrap"`, "bwrap", `"landlock"`, `"docker"`, `unknown backend "docker"`},
	{"network", `"restricted"`, "restricted", `"restricted"`, `"deny"`, "deny", `"allow"`, `"some"`, `unknown network setting "some"`},
	{"allowed_domains", `["*.example.com", "a.test"]`, "*.example.com, a.test", `["*.example.com","a.test"]`, `["api.example.com"]`, "api.example.com", `["evil.test"]`, `["a b"]`, `entry 1 ("a b"):`},
	{"denied_domains", `["evil.test"]`, "evil.test", `["evil.test"]`, `["bad.test"]`, "evil.test, bad.test", "", `["*"]`, `entry 1 ("*"):`},
	{"fallback_root", `"/srv/agent"`, "/srv/agent", `"/srv/agent"`, `"/srv/agent"`, "/srv/agent", `"/"`, `"srv"`, "must start with / or ~/"},
	{"extra_write_allow", `["/opt/x"]`, "/opt/x", `["/opt/x"]`, "", "", `["/"]`, `["rel"]`, `entry 1 ("rel"): must start with / or ~/`},
	{"extra_read_deny", `["~/a"]`, "~/a", `["~/a"]`, `["~/b"]`, "~/a, ~/b", "", `["rel"]`, `entry 1 ("rel"): must start with / or ~/`},
	{"protected_paths", `["p"]`, "p", `["p"]`, `["q"]`, "p, q", "", `["/etc"]`, `entry 1 ("/etc"): must be relative`},
	{"env_passthrough", `["GOPATH"]`, "GOPATH", `["GOPATH"]`, "", "", `["AWS_SECRET_ACCESS_KEY"]`, `["*"]`, `entry 1 ("*"): a bare "*"`},
	{"dangerous_commands", `["kubectl delete"]`, "kubectl delete", `["kubectl delete"]`, `["terraform destroy"]`, "kubectl delete, terraform destroy", "", `["-rf"]`, "rule 1:"},
	{"approval_timeout", `"2m"`, "2m0s", `"2m0s"`, `"30s"`, "30s", `"1h"`, `"0s"`, `"0s" must be positive`},
	{"bash.timeout", `"1m"`, "1m0s", `"1m0s"`, `"10s"`, "10s", `"5m"`, `"1h"`, `"1h" is longer than the maximum 10m0s`},
	{"bash.max_output_chars", "1000", "1000", "1000", "10", "10", "99999", "0", "0 must be a positive number of characters"},
	{"processes.max", "8", "8", "8", "4", "4", "32", "0", "0 must be a positive number of processes"},
	{"processes.max_buffer_chars", "500000", "500000", "500000", "1000", "1000", "2000000", "-1", "-1 must be a positive number of characters"},
	{"profiles.mcp_server.network", `"restricted"`, "restricted", `"restricted"`, `"deny"`, "deny", `"allow"`, `"some"`, `unknown network setting "some"`},
	{"profiles.mcp_server.allowed_domains", `["*.github.com"]`, "*.github.com", `["*.github.com"]`, `["api.github.com"]`, "api.github.com", `["evil.test"]`, `["a b"]`, `entry 1 ("a b"):`},
	{"profiles.mcp_server.extra_write_allow", `["/opt/x"]`, "/opt/x", `["/opt/x"]`, "", "", `["/"]`, `["rel"]`, `entry 1 ("rel"): must start with / or ~/`},
	{"profiles.external_agent.network", `"deny"`, "deny", `"deny"`, `"deny"`, "deny", `"allow"`, `"some"`, `unknown network setting "some"`},
	{"profiles.external_agent.allowed_domains", `["a.test"]`, "a.test", `["a.test"]`, `["a.test"]`, "a.test", `["b.test"]`, `["a b"]`, `entry 1 ("a b"):`},
	{"profiles.external_agent.extra_write_allow", `["/opt/y"]`, "/opt/y", `["/opt/y"]`, "", "", `["/"]`, `["rel"]`, `entry 1 ("rel"): must start with / or ~/`},
	{"http.addr", `"127.0.0.1:1"`, "127.0.0.1:1", `"127.0.0.1:1"`, `"127.0.0.1:1"`, "127.0.0.1:1", `"0.0.0.0:80"`, `"localhost"`, `"localhost" is not HOST:PORT`},
	{"http.allowed_origins", `["http://a.example"]`, "http://a.example", `["http://a.example"]`, "", "", `["http://evil.example"]`, `["*"]`, `entry 1 ("*"): a wildcard`},
	{"http.tokens", `"/etc/cordon/tokens"`, "/etc/cordon/tokens", `"/etc/cordon/tokens"`, `"/etc/cordon/tokens"`, "/etc/cordon/tokens", `"/tmp/mine"`, `"tokens"`, "must start with / or ~/"},
	{"http.idle_timeout", `"10m"`, "10m0s", `"10m0s"`, `"1m"`, "1m0s", `"1h"`, `"0s"`, `"0s" must be positive`},
	{"http.drain_timeout", `"20s"`, "20s", `"20s"`, `"10s"`, "10s", `"1m"`, `"-1s"`, `"-1s" must be positive`},
}

func TestEveryKey(t *testing.T) {
	cases := map[string]bool{}
	for _, c := range keyCases {
		cases[c.key] = true
	}
	for _, k := range keys {
		if s := k.decl(); !s.commandLine {
			assert.True(t, cases[s.name], "%s has no row in keyCases", s.name)
		}
	}

	for _, c := range keyCases {
		t.Run(c.key, func(t *testing.T) {
			line := c.key + " = %s\n" // a dotted key puts a table's key in its table
			row := func(cfg *Config) Setting {
				for _, s := range cfg.Settings() {
					if s.Key == c.key {
						return s
					}
				}
				t.Fatalf("status has no row %s", c.key)
				return Setting{}
			}

			def := newLayers(t).load(Flags{})

			assert.Equal(t, SourceDefault, row(def).Origin.Source, "the default")

			userOrigin := func(l *layers) Origin {
				return Origin{Source: SourceUser, File: filepath.Join(l.home, ".config", "cordon", "config.toml"), Line: 1}
			}
			l := newLayers(t).user(fmt.Sprintf(line, c.user))
			user := l.load(Flags{})
			r := row(user)
			assert.Equal(t, c.text, r.Text, "status text")
			got, err := json.Marshal(r)
			require.NoError(t, err)
			want, err := json.Marshal(userOrigin(l))
			require.NoError(t, err)
			assert.JSONEq(t, `{"value": `+c.json+`, "origin": `+string(want)+`}`, stripEntries(t, got), "status --json")
			assert.Contains(t, Diff(def, user), Change{Key: c.key, Old: row(def).Text, New: c.text, StartOnly: k(c.key).decl().startOnly}, "SIGHUP diff")
			assert.Empty(t, Diff(user, l.load(Flags{})), "the same config again")

			if c.tighter != "" {
				ws := newLayers(t).user(fmt.Sprintf(line, c.user)).workspace(fmt.Sprintf(line, c.tighter))
				cfg := ws.load(Flags{})
				assert.Empty(t, cfg.Warnings, "a workspace file may tighten")
				assert.Equal(t, c.tighterText, row(cfg).Text)
				assert.Equal(t, SourceWorkspace, row(cfg).Origin.Source)
			}
			if c.wider != "" {
				ws := newLayers(t).user(fmt.Sprintf(line, c.user)).workspace(fmt.Sprintf(line, c.wider))
				cfg := ws.load(Flags{})
				require.NotEmpty(t, cfg.Warnings, "a workspace file may not widen")
				for _, w := range cfg.Warnings {
					assert.Equal(t, c.key, w.Key)
					assert.Equal(t, 1, w.Line)
					assert.Contains(t, w.Message, "dropped")
				}
				assert.Equal(t, c.text, row(cfg).Text, "the user's value stays")
				assert.Equal(t, userOrigin(ws), row(cfg).Origin)
			}

			_, err = parseFile("c.toml", []byte(fmt.Sprintf(line, c.bad)))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "c.toml:1: "+c.key+": "+c.badErr), err.Error())
		})
	}
}

// stripEntries drops a list row's per-entry origins, which
// TestWorkspaceOnlyTightens checks.
func stripEntries(t *testing.T, row []byte) string {
	var m map[string]any
	require.NoError(t, json.Unmarshal(row, &m))
	delete(m, "entries")
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

// k is the declaration named name.
func k(name string) key {
	for _, k := range keys {
		if k.decl().name == name {
			return k
		}
	}
	panic("no key " + name)
}
