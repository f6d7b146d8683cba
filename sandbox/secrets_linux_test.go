package sandbox

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/cordonhq/cordon/internal/secrets/secretstest"
	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// realToken is the secret the sandbox must never see.
const realToken = "sk-live-REALVALUE-7f3a9c2e51d84b06"

// TestSecretsSentinelInsideRealValueOutside: curl (and Python's urllib
// where there is a python3), in the real sandbox, send the token's
// variable to the secret's host and the server receives the real value;
// the same to another allowed host is refused and that server gets
// nothing; the command's environment, /proc/self/environ, the trust bundle
// and what it wrote hold the sentinel only; the refusal is reported by
// name, without the value.
func TestSecretsSentinelInsideRealValueOutside(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv, roots, _ := secretstest.NewUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Host+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		fmt.Fprint(w, "welcome")
	}))
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	_, pyErr := exec.LookPath("python3")
	eachBackend(t, func(t *testing.T, prov Backend) {
		mu.Lock()
		got = nil
		mu.Unlock()
		f := newFixture(t, prov)
		v, err := secrets.New([]secrets.Secret{{Name: "api", Value: []byte(realToken), Hosts: []string{"localhost"}, Env: "API_TOKEN"}})
		require.NoError(t, err)
		sentinel := v.Sentinel("api")
		script := fmt.Sprintf(`
curl -sS -m 20 -H "Authorization: Bearer $API_TOKEN" https://localhost:%[1]s/own; echo " [own $?]"
curl -sS -m 20 -w ' %%{http_code}' -H "Authorization: Bearer $API_TOKEN" https://127.0.0.1:%[1]s/other; echo " [other $?]"
if command -v python3 >/dev/null; then
python3 -c '
import os, urllib.request
r = urllib.request.Request("https://localhost:%[1]s/py", headers={"Authorization": "Bearer " + os.environ["API_TOKEN"]})
print(urllib.request.urlopen(r, timeout=20).read().decode(), "[py]")
'
fi
env > env.txt
tr '\0' '\n' < /proc/self/environ > environ.txt
cat "$SSL_CERT_FILE" > bundle.txt
echo "$API_TOKEN" > token.txt
echo "sentinel: $API_TOKEN"
`, port)
		p := f.policy(WorkspaceWrite, NetworkRestricted)
		p.AllowedDomains = []string{"localhost:" + port, "127.0.0.1:" + port}
		var logMu sync.Mutex
		var logged []string
		var out bytes.Buffer
		ex := &Executor{Backends: &Backends{Forced: f.prov.Name()}, Requirement: Required}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		_, err = ex.Run(ctx, p, RunSpec{
			Argv: []string{"bash", "-c", script}, Dir: p.WorkspaceRoot,
			// The real value also sits in a variable of the caller's, as a
			// wide env_passthrough would bring it: it must not get in.
			Env:    append(envWithout("HOME"), "HOME="+f.home, "LEAKED_TOKEN="+realToken),
			Stdout: &out, Stderr: &out, OwnGroup: true,
			Egress: EgressHooks{Secrets: v, UpstreamRoots: roots,
				SecretUsed: func(host string, port int, name string, r *secrets.Refusal) {
					logMu.Lock()
					defer logMu.Unlock()
					line := fmt.Sprintf("%s:%d %s injected", host, port, name)
					if r != nil {
						line = fmt.Sprintf("%s:%d %s refused: %v", host, port, name, r)
					}
					logged = append(logged, line)
				}},
		})
		require.NoError(t, err, out.String())
		o := out.String()
		assert.Contains(t, o, "welcome [own 0]", o)
		assert.Contains(t, o, "not forwarded\n 403 [other 0]", o)
		assert.Contains(t, o, "secret api", o)
		assert.Contains(t, o, "sentinel: "+sentinel)
		if pyErr == nil {
			assert.Contains(t, o, "welcome [py]", o)
		}
		mu.Lock()
		received := append([]string(nil), got...)
		mu.Unlock()
		assert.Contains(t, received, "localhost:"+port+"/own Bearer "+realToken, "the server got the real value")
		for _, r := range received {
			assert.NotContains(t, r, "/other", "the other host got nothing")
		}
		assert.NotContains(t, o, realToken)
		for _, name := range []string{"env.txt", "environ.txt", "bundle.txt", "token.txt"} {
			data, err := os.ReadFile(filepath.Join(f.ws, name))
			require.NoError(t, err, name)
			assert.NotContains(t, string(data), realToken, name)
			assert.NotContains(t, string(data), "LEAKED_TOKEN", name)
		}
		env, _ := os.ReadFile(filepath.Join(f.ws, "env.txt"))
		assert.Contains(t, string(env), "API_TOKEN="+sentinel)
		assert.Contains(t, string(env), "SSL_CERT_FILE=")
		logMu.Lock()
		defer logMu.Unlock()
		assert.Contains(t, logged, "localhost:"+port+" api injected")
		refusedLogged := false
		for _, l := range logged {
			assert.NotContains(t, l, realToken)
			refusedLogged = refusedLogged || strings.HasPrefix(l, "127.0.0.1:"+port+" api refused")
		}
		assert.True(t, refusedLogged, "%v", logged)
	})
}

// TestSecretsGitOverHTTPS: git, in the real sandbox, authenticates to a
// smart-HTTP server (git http-backend) with the sentinel as its password:
// the server gets the real value in Basic auth, and git's exit says the
// exchange worked.
func TestSecretsGitOverHTTPS(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		testenv.SkipUnlessCI(t, "no git: the secret is tested through git over HTTPS")
	}
	root := t.TempDir()
	require.NoError(t, exec.Command(git, "init", "-q", "--bare", filepath.Join(root, "repo.git")).Run())
	backend := &cgi.Handler{Path: git, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	var mu sync.Mutex
	var auths []string
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+realToken))
	srv, roots, _ := secretstest.NewUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != want {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	u, _ := url.Parse(srv.URL)
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		v, err := secrets.New([]secrets.Secret{{Name: "git", Value: []byte(realToken), Hosts: []string{"localhost"}, Env: "GIT_TOKEN"}})
		require.NoError(t, err)
		p := f.policy(WorkspaceWrite, NetworkRestricted)
		p.AllowedDomains = []string{"localhost:" + u.Port()}
		var out bytes.Buffer
		ex := &Executor{Backends: &Backends{Forced: f.prov.Name()}, Requirement: Required}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		script := fmt.Sprintf(`git -c credential.helper= ls-remote "https://x-access-token:$GIT_TOKEN@localhost:%s/repo.git"; echo "[git $?]"`, u.Port())
		_, err = ex.Run(ctx, p, RunSpec{Argv: []string{"bash", "-c", script}, Dir: p.WorkspaceRoot,
			Env:    append(envWithout("HOME"), "HOME="+f.home, "GIT_TERMINAL_PROMPT=0"),
			Stdout: &out, Stderr: &out, OwnGroup: true,
			Egress: EgressHooks{Secrets: v, UpstreamRoots: roots}})
		require.NoError(t, err, out.String())
		assert.Contains(t, out.String(), "[git 0]", out.String())
		assert.NotContains(t, out.String(), realToken)
		mu.Lock()
		defer mu.Unlock()
		assert.Contains(t, auths, want, "the server got the real value in Basic auth")
	})
}
