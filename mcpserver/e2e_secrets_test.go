//go:build linux

package mcpserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/secrets/secretstest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecretsThroughTheServer: a [secrets] table of the user's config,
// whose value is in cordon's own environment (GITHUB_TOKEN, the canary of
// the harness), reaches the secret's host as the real value from a bash
// call under network restricted, on both backends; the command sees only
// the sentinel, cannot find the value in any process's environment it can
// read (cordon's included) nor in any process memory it can read, finds
// no private key beside the trust bundle, and a request carrying the sentinel to
// another allowed host is refused and recorded in the session log by
// name, and reaches the human as a log message; the secret's file reads
// as its masked copy under bwrap and is denied under Landlock and to
// read_file. The same probe in read-only mode finds the value nowhere
// either.
func TestSecretsThroughTheServer(t *testing.T) {
	const value = "gh-token-canary" // the harness puts it in cordon's environment
	var mu sync.Mutex
	var got []string
	srv, _, caPEM := secretstest.NewUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		fmt.Fprint(w, "welcome")
	}))
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	// cordon verifies the real upstream with the system's roots, which Go
	// takes from SSL_CERT_FILE: here the test server's CA.
	caFile := filepath.Join(t.TempDir(), "upstream-ca.pem")
	require.NoError(t, os.WriteFile(caFile, caPEM, 0o644))
	t.Setenv("SSL_CERT_FILE", caFile)
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			w := newWorld(t)
			w.writeUserConfig(t, fmt.Sprintf(`
network = "restricted"
allowed_domains = ["localhost:%[1]s", "127.0.0.1:%[1]s"]

[secrets.github]
from_env = "GITHUB_TOKEN"
env = "GITHUB_TOKEN"
hosts = ["localhost"]
files = ["~/.config/gh/hosts.yml"]
`, port))
			ghFile := filepath.Join(w.home, ".config", "gh", "hosts.yml")
			require.NoError(t, os.MkdirAll(filepath.Dir(ghFile), 0o755))
			require.NoError(t, os.WriteFile(ghFile, []byte("github.com:\n    oauth_token: "+value+"\n"), 0o600))
			var logMu sync.Mutex
			var warnings []string
			cs := w.stdio(t, clientOpts{version: "2025-11-25", logs: func(_ context.Context, r *mcp.LoggingMessageRequest) {
				logMu.Lock()
				defer logMu.Unlock()
				warnings = append(warnings, fmt.Sprintf("%s %v", r.Params.Level, r.Params.Data))
			}}, "--backend", backend, "--approval", "on-request") // python3 -c, below, is not inspected: it would be asked about
			probe := fmt.Sprintf(`
curl -sS -m 20 -H "Authorization: Bearer $GITHUB_TOKEN" https://localhost:%[1]s/own; echo " [own $?]"
curl -sS -m 20 -w ' %%{http_code}' -H "Authorization: Bearer $GITHUB_TOKEN" https://127.0.0.1:%[1]s/other; echo " [other $?]"
echo "sees: $GITHUB_TOKEN"
for p in /proc/[0-9]*; do tr '\0' '\n' < $p/environ 2>/dev/null; done | grep -c '%[2]s'
python3 -c '
import os
needle = b"gh-token-" + b"can" + b"ary"
hits = readable = 0
for pid in os.listdir("/proc"):
    if not pid.isdigit() or int(pid) == os.getpid():
        continue
    try:
        maps = open("/proc/%%s/maps" %% pid).read().splitlines()
        mem = open("/proc/%%s/mem" %% pid, "rb", 0)
    except OSError:
        continue
    for line in maps:
        span, perms = line.split()[:2]
        if perms[0] != "r":
            continue
        lo, hi = (int(x, 16) for x in span.split("-"))
        try:
            mem.seek(lo)
            data = mem.read(hi - lo)
        except (OSError, OverflowError, ValueError):
            continue
        readable += 1
        hits += needle in data
print("memory: %%d readable regions, %%d hold the value" %% (readable, hits))
'
grep -rl "PRIVATE KEY" "$SSL_CERT_FILE" "$(dirname "$SSL_CERT_FILE")" 2>/dev/null | wc -l | sed 's/^/keys: /'
`, port, "gh-token-cana[r]y")
			script := probe + `env > env.txt
cat ~/.config/gh/hosts.yml; echo "[gh $?]"
`
			probed := func(out string) {
				t.Helper()
				assert.Contains(t, out, "welcome [own 0]", out)
				assert.Contains(t, out, " 403 [other 0]", out)
				assert.Contains(t, out, "sees: cordon-sentinel-", out)
				assert.Contains(t, out, "\n0\n", "no readable process environment holds the value: %s", out)
				assert.Regexp(t, `memory: [1-9]\d* readable regions, 0 hold the value`, out, "no memory the sandbox can read holds the value")
				assert.Contains(t, out, "keys: 0", "no file beside the trust bundle holds a private key")
				assert.NotContains(t, out, value)
			}
			res := call(t, cs, "bash", map[string]any{"command": script})
			out := text(res)
			probed(out)
			// The secret's file: its masked copy under bwrap, denied under
			// Landlock; to read_file, denied on both.
			if backend == "bwrap" {
				assert.Contains(t, out, "oauth_token: cordon-sentinel-", out)
				assert.Contains(t, out, "\n[gh 0]", out)
			} else {
				assert.Contains(t, out, "\n[gh 1]", out)
			}
			rf := call(t, cs, "read_file", map[string]any{"path": ghFile})
			assert.True(t, rf.IsError, "read_file of the secret's file is refused")
			assert.NotContains(t, text(rf), value)
			env, err := os.ReadFile(filepath.Join(w.ws, "env.txt"))
			require.NoError(t, err)
			assert.NotContains(t, string(env), value)
			mu.Lock()
			assert.Equal(t, []string{"/own Bearer " + value}, got, "only the secret's host got a request, with the real value")
			mu.Unlock()
			st := structured(t, call(t, cs, "sandbox_status", nil))
			assert.Equal(t, []any{map[string]any{"name": "github", "env": "GITHUB_TOKEN", "hosts": []any{"localhost"}}}, st["secrets"])
			if backend == "bwrap" {
				assert.Contains(t, st["proxy_ignored"], "captured")
			} else {
				assert.Contains(t, st["proxy_ignored"], "no network at all")
			}
			// The human hears of the refusal: a log message to the client,
			// naming the secret and the host, never the value.
			require.Eventually(t, func() bool {
				logMu.Lock()
				defer logMu.Unlock()
				return len(warnings) > 0
			}, 30*time.Second, 50*time.Millisecond, "no notifications/message for the refusal")
			logMu.Lock()
			assert.Len(t, warnings, 1, "%v", warnings)
			assert.Contains(t, warnings[0], "warning cordon: the sentinel of secret github was sent to 127.0.0.1", warnings)
			assert.NotContains(t, strings.Join(warnings, "\n"), value)
			logMu.Unlock()
			sessions := listSessions(t, w)
			require.Len(t, sessions, 1)
			logText := cordonCLI(t, w, "log", "--json", sessions[0])
			assert.Contains(t, logText, `"decision":"secret-injected"`)
			assert.Contains(t, logText, `"decision":"secret-refused"`)
			assert.Contains(t, logText, `"secret":"github"`)
			assert.False(t, strings.Contains(logText, value), "the log never holds the value")

			// Every mode short of danger-full-access keeps the value out:
			// read-only too.
			ro := w.stdio(t, clientOpts{version: "2025-11-25"}, "--backend", backend, "--approval", "on-request", "--mode", "read-only")
			probed(text(call(t, ro, "bash", map[string]any{"command": probe})))
		})
	}
}

// TestSecretsNeverInUnderAllowOrDeny: under network allow or deny there is
// no proxy and no sentinel, and a wide env_passthrough naming the
// secret's own variable must still not carry the real value in (a red
// team's repro: a workspace file may narrow restricted to deny).
func TestSecretsNeverInUnderAllowOrDeny(t *testing.T) {
	const value = "gh-token-canary" // the harness puts it in cordon's environment
	for _, network := range []string{"allow", "deny"} {
		t.Run(network, func(t *testing.T) {
			w := newWorld(t)
			w.writeUserConfig(t, fmt.Sprintf(`
network = %q
env_passthrough = ["GITHUB_TOKEN", "OTHER_NAME"]

[secrets.github]
from_env = "GITHUB_TOKEN"
env = "GITHUB_TOKEN"
hosts = ["localhost"]
`, network))
			t.Setenv("OTHER_NAME", "prefix-"+value) // the value under another name
			cs := w.stdio(t, clientOpts{version: "2025-11-25"})
			res := call(t, cs, "bash", map[string]any{"command": `echo "sees: [$GITHUB_TOKEN] [$OTHER_NAME]"; env | grep -c canary || true`})
			out := text(res)
			assert.Contains(t, out, "sees: [] []", "neither variable comes in")
			assert.NotContains(t, out, value)
		})
	}
}

// writeUserConfig writes the world's user config file.
func (w *world) writeUserConfig(t testing.TB, toml string) {
	t.Helper()
	dir := filepath.Join(w.home, ".config", "cordon")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.toml"), []byte(toml), 0o644))
}
