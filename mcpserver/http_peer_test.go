//go:build linux

package mcpserver

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/cordonhq/cordon/internal/peer"
	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The wiring of refuseSandboxed, in this process (so that -race sees it):
// the test binary stands for cordon's executable, so that a confined
// child of this test (no_new_privs set, as cordon's helper sets it) is
// inside "a sandbox" while the test's own connections are not. The
// end-to-end tests (e2e_http_peer_test.go) drive the real binary.
func TestRefuseSandboxedWiring(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		testenv.SkipUnlessCI(t, "no curl")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		testenv.SkipUnlessCI(t, "no setpriv")
	}
	peers, err := peer.New(peer.Options{HelperArg: sandbox.HelperArg, SelfExe: "/proc/self/exe"})
	require.NoError(t, err)
	var log lockedBuffer
	s := &Server{log: zerolog.New(&log).Level(zerolog.DebugLevel)}
	srv := httptest.NewUnstartedServer(s.refuseSandboxed(peers, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "served")
	})))
	srv.Config.ConnContext = withConnPeer
	srv.Start()
	defer srv.Close()

	// A child of a process running cordon's executable, while this
	// process's own clients connect, many at once.
	var wg sync.WaitGroup
	var out []byte
	var curlErr error
	wg.Go(func() {
		out, curlErr = exec.Command(setpriv, "--no-new-privs", curl, "-sS", "-i", srv.URL).CombinedOutput()
	})
	for range 8 {
		wg.Go(func() {
			for range 5 {
				c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
				resp, err := c.Get(srv.URL)
				if !assert.NoError(t, err) {
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
				assert.Equal(t, "served", string(body))
			}
		})
	}
	wg.Wait()
	require.NoError(t, curlErr, "%s", out)
	assert.Contains(t, string(out), "HTTP/1.1 403 Forbidden")
	assert.Contains(t, strings.ToLower(string(out)), "connection: close", "a refused connection is closed")
	assert.Contains(t, string(out), "forbidden: requests from inside a cordon sandbox are refused")
	assert.Contains(t, log.String(), `"level":"warn"`)
	assert.Contains(t, log.String(), `"command":"`+curl+` …"`)
	assert.Contains(t, log.String(), `"message":"HTTP client allowed"`)
}
