package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/netip"
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

// TestSecretsThroughCapture: programs that ignore the proxy variables —
// Node's built-in fetch and a Go program with its own http.Transport —
// reach a secret's host under bwrap through transparent capture, with the
// real value put in for the sentinel, on an upstream at a public address
// on port 443 as a real API's is; the same sentinel sent by them to
// another allowed host is refused and never reaches it (its hit log stays
// empty); an unlisted host is refused before anything reaches it; and with
// the secret's host in denied_domains nothing reaches any host.
func TestSecretsThroughCapture(t *testing.T) {
	prov := newBwrap()
	if res := probeBackend(prov, t.TempDir()); !res.OK {
		t.Fatalf("bwrap must work on this machine: %s", res.Reason)
	}
	if _, err := exec.LookPath("node"); err != nil {
		testenv.SkipUnlessCI(t, "node is not installed")
	}
	ln, addr := publicListener(t)
	var mu sync.Mutex
	var hits []string
	_, roots, _ := secretstest.NewUpstreamOn(t, ln, []string{"api.secret.test", "other.secret.test", "unlisted.secret.test"},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			hits = append(hits, r.Host+r.URL.Path+" "+r.Header.Get("Authorization"))
			mu.Unlock()
			if r.Header.Get("Authorization") != "Bearer "+realToken {
				http.Error(w, "bad credentials", http.StatusUnauthorized)
				return
			}
			fmt.Fprint(w, "welcome")
		}))
	f := newFixture(t, prov)
	buildGoProgram(t, filepath.Join(f.ws, "gofetch"), `package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
)

func main() {
	c := &http.Client{Transport: &http.Transport{Proxy: nil}}
	req, _ := http.NewRequest("GET", os.Args[1], nil)
	req.Header.Set("Authorization", "Bearer "+os.Getenv("API_TOKEN"))
	r, err := c.Do(req)
	if err != nil {
		fmt.Println("error", err)
		return
	}
	b, _ := io.ReadAll(r.Body)
	fmt.Println(r.StatusCode, string(b))
}
`)

	v, err := secrets.New([]secrets.Secret{{Name: "api", Value: []byte(realToken), Hosts: []string{"api.secret.test"}, Env: "API_TOKEN"}})
	require.NoError(t, err)
	script := `
for host in api other unlisted; do
  node -e 'fetch(process.argv[1], {headers: {Authorization: "Bearer " + process.env.API_TOKEN}}).then(async r => console.log(r.status, (await r.text()).trim(), "[node " + process.argv[2] + "]")).catch(e => console.log("error", String(e.cause), "[node " + process.argv[2] + "]"))' "https://$host.secret.test/node-$host" "$host"
  echo "$(./gofetch "https://$host.secret.test/go-$host") [go $host]"
done
env | grep -c -F -e "${API_TOKEN#cordon-sentinel-}" -e REALVALUE
`
	run := func(denied []string) (string, []string) {
		p := f.policy(WorkspaceWrite, NetworkRestricted)
		p.AllowedDomains, p.DeniedDomains = []string{"api.secret.test", "other.secret.test"}, denied
		var logged []string
		var buf bytes.Buffer
		ex := &Executor{Backends: &Backends{Forced: prov.Name()}, Requirement: Required}
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		_, err := ex.Run(ctx, p, RunSpec{
			Argv: []string{"bash", "-c", script}, Dir: p.WorkspaceRoot,
			Env:    append(envWithout("HOME"), "HOME="+f.home),
			Stdout: &buf, Stderr: &buf, OwnGroup: true,
			Egress: EgressHooks{Secrets: v, UpstreamRoots: roots,
				Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
					if strings.HasSuffix(host, ".secret.test") {
						return []netip.Addr{addr}, nil
					}
					return nil, fmt.Errorf("no such host %s", host)
				},
				SecretUsed: func(host string, port int, name string, r *secrets.Refusal) {
					mu.Lock()
					defer mu.Unlock()
					logged = append(logged, fmt.Sprintf("%s:%d %s refused=%v", host, port, name, r != nil))
				}},
		})
		require.NoError(t, err, buf.String())
		mu.Lock()
		defer mu.Unlock()
		return buf.String(), logged
	}
	o, logged := run(nil)
	assert.Contains(t, o, "200 welcome [node api]", o)
	assert.Contains(t, o, "200 welcome [go api]", o)
	for _, who := range []string{"node", "go"} {
		assert.Regexp(t, `403 cordon: the sentinel of secret api was sent to other\.secret\.test[^\n]*\[`+who+` other\]`, o)
		assert.NotContains(t, o, "welcome ["+who+" unlisted]", o)
		assert.NotContains(t, o, "401", "a host got a request it should not have: %s", o)
	}
	assert.Contains(t, o, "\n1\n", "the environment holds the sentinel once and never the value: %s", o)
	assert.NotContains(t, o, realToken)
	mu.Lock()
	assert.ElementsMatch(t, []string{"api.secret.test/node-api Bearer " + realToken, "api.secret.test/go-api Bearer " + realToken}, hits,
		"only the secret's host was reached, with the real value")
	hits = nil
	mu.Unlock()
	assert.Contains(t, logged, "api.secret.test:443 api refused=false")
	assert.Contains(t, logged, "other.secret.test:443 api refused=true")

	// The secret's host denied: deny wins, and nothing reaches any host.
	o, _ = run([]string{"api.secret.test"})
	assert.NotContains(t, o, "welcome", o)
	assert.NotContains(t, o, realToken)
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, hits, "a denied secret's host got a request: %s", o)
}
