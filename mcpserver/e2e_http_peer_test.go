//go:build linux

package mcpserver_test

import (
	"bufio"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 11, item 5: a confined command that reaches cordon's HTTP port
// (network allow shares the host's network namespace) and has the bearer
// token must still not become a client of cordon: it could open its own
// session, ask for danger-full-access and answer its own elicitation.
// cordon refuses every connection whose client runs inside a cordon
// sandbox, its own or another cordon's, with 403.

const peerToken = "peer-test-token-0123456789abcdef"

// serverLog is what a cordon server wrote to stderr.
type serverLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *serverLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// peerServer starts `cordon serve --http` with the token in
// CORDON_HTTP_TOKEN, as a human sets it (the Landlock backend requires
// that: it cannot hide a token file), and the network open to commands.
func peerServer(t *testing.T, w *world, extra ...string) (url string, log *serverLog) {
	t.Helper()
	url, log, _ = peerServerCmd(t, w, extra...)
	return url, log
}

// peerServerCmd is peerServer, with the server's process.
func peerServerCmd(t *testing.T, w *world, extra ...string) (url string, log *serverLog, cmd *exec.Cmd) {
	t.Helper()
	args := w.serveArgs(append([]string{"--http", "127.0.0.1:0", "--mode", "workspace-write", "--network", "allow"}, extra...)...)
	cmd = exec.Command(cordonBin, args...)
	cmd.Env = append(w.env(), "CORDON_HTTP_TOKEN="+peerToken)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	log = &serverLog{}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			t.Log("cordon: " + line)
			log.mu.Lock()
			log.lines = append(log.lines, line)
			log.mu.Unlock()
			if i := strings.Index(line, `"addr":"`); i >= 0 && !sent {
				rest := line[i+len(`"addr":"`):]
				addr <- rest[:strings.IndexByte(rest, '"')]
				sent = true
			}
		}
	}()
	select {
	case a := <-addr:
		return "http://" + a + "/mcp", log, cmd
	case <-time.After(20 * time.Second):
		t.Fatal("cordon serve --http did not start")
	}
	return "", nil, nil
}

// attackScript sends cordon, with the right token, what a confined
// command would: a 2026-07-28 tools/call, which runs a command in one
// round trip without any session (here: touch FILE), then a 2025-11-25
// initialize, which opens a session (its answer's headers carry the
// Mcp-Session-Id). It prints each answer's status and body.
func attackScript(url, file string) string {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"inside","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	call := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"touch %s"},%s}}`, file, meta)
	curl := fmt.Sprintf(`curl -sS --max-time 20 -w '\nstatus=%%{http_code}\n' -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'`, peerToken)
	return fmt.Sprintf(`%[1]s -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: bash' --data '%[2]s' %[3]s 2>&1
echo ---
%[1]s -i --data '%[4]s' %[3]s 2>&1
`, curl, call, url, initBody)
}

// refusedInside asserts what a confined client got: 403 twice with the
// refusal, and neither its command run nor a session opened.
func refusedInside(t *testing.T, out, file string, log *serverLog) {
	t.Helper()
	assert.Equal(t, 2, strings.Count(out, "status=403"), "both requests are refused:\n%s", out)
	assert.Contains(t, out, "forbidden: requests from inside a cordon sandbox are refused")
	assert.NotContains(t, out, "status=200")
	assert.NoFileExists(t, file, "the confined client's tools/call must not have run")
	assert.NotContains(t, strings.ToLower(out), "mcp-session-id", "the confined client's initialize must not open a session")
	require.Eventually(t, func() bool { return strings.Contains(log.String(), "refused an HTTP client") }, 5*time.Second, 50*time.Millisecond)
	assert.Regexp(t, `"level":"warn","client":"127\.0\.0\.1:\d+","pid":[1-9]\d*,"command":"[^"]*curl[^"]*"`, log.String(), "the refusal is logged with the pid and the program")
	assert.NotContains(t, log.String(), peerToken, "the log never carries the token a command line held")
}

// acceptedOutside runs the same requests from outside every sandbox:
// both succeed, which is what makes the refusals above mean something.
func acceptedOutside(t *testing.T, w *world, url string) {
	t.Helper()
	file := filepath.Join(w.ws, "from-outside")
	out, err := exec.Command("/bin/sh", "-c", attackScript(url, file)).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, 2, strings.Count(string(out), "status=200"), "%s", out)
	assert.FileExists(t, file, "the same tools/call from outside runs")
	assert.Contains(t, strings.ToLower(string(out)), "mcp-session-id: ", "the same initialize from outside opens a session")
}

func TestHTTPRefusesClientsInsideTheSandbox(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			url, log := peerServer(t, w, "--backend", backend)
			cs := connectHTTP(t, url, peerToken, clientOpts{version: "2025-11-25"})
			file := filepath.Join(w.ws, "from-bash")

			res := call(t, cs, "bash", map[string]any{"command": attackScript(url, file)})
			out, _ := structured(t, res)["output"].(string)
			assert.Equal(t, backend, structured(t, res)["backend"])
			refusedInside(t, out, file, log)

			// The human's own client, outside, keeps working.
			res = call(t, cs, "sandbox_status", nil)
			assert.False(t, res.IsError, text(res))
			acceptedOutside(t, w, url)
		})
	}
}

// Another cordon's sandbox: `cordon exec` in another terminal.
func TestHTTPRefusesCordonExecClients(t *testing.T) {
	for _, backend := range []string{"landlock", "bwrap"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			url, log := peerServer(t, w)
			file := filepath.Join(w.ws, "from-exec")
			cmd := exec.Command(cordonBin, "exec", "--backend", backend, "--network", "allow", "--mode", "workspace-write",
				"--workspace", w.ws, "--state-dir", filepath.Join(w.base, "exec-state"), "--", "/bin/sh", "-c", attackScript(url, file))
			cmd.Env = w.env()
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			refusedInside(t, string(out), file, log)
			acceptedOutside(t, w, url)
		})
	}
	// What cordon runs unconfined (danger-full-access, --no-sandbox) is not
	// inside anything, and stays a client like any other process.
	t.Run("danger-full-access", func(t *testing.T) {
		w := newWorld(t)
		url, _ := peerServer(t, w)
		file := filepath.Join(w.ws, "from-danger")
		cmd := exec.Command(cordonBin, "exec", "--mode", "danger-full-access", "--workspace", w.ws,
			"--state-dir", filepath.Join(w.base, "exec-state"), "--", "/bin/sh", "-c", attackScript(url, file))
		cmd.Env = w.env()
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Equal(t, 2, strings.Count(string(out), "status=200"), "%s", out)
		assert.FileExists(t, file)
	})
}

// A command that orphans a background client (a double fork into a new
// session) so that it leaves the command's process tree. Under bwrap the
// orphan stays in the sandbox's pid namespace, beneath bwrap. Under
// Landlock it is kept by the helper, which stays alive beneath the
// command as its child subreaper (reaper_linux.go).
func TestHTTPRefusesOrphanedClientsInsideTheSandbox(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			url, log := peerServer(t, w, "--backend", backend)
			cs := connectHTTP(t, url, peerToken, clientOpts{version: "2025-11-25"})
			file := filepath.Join(w.ws, "from-orphan")
			outFile := filepath.Join(w.ws, "orphan.out")
			orphan := "sleep 0.5; " + strings.ReplaceAll(attackScript(url, file), "'", `'\''`)
			script := fmt.Sprintf(`tr '\0' ' ' < /proc/$PPID/cmdline; echo
( setsid /bin/sh -c '%s' < /dev/null > %s 2>&1 & )
for i in $(seq 100); do [ "$(grep -c status= %s 2>/dev/null)" = 2 ] && break; sleep 0.1; done`, orphan, outFile, outFile)
			res := call(t, cs, "bash", map[string]any{"command": script})
			out, _ := structured(t, res)["output"].(string)
			parent, _, _ := strings.Cut(out, "\n")
			if backend == "landlock" {
				require.Contains(t, parent, "__sandbox-helper", "the Landlock helper stays alive beneath the command, as the subreaper that keeps its orphans")
			}
			got := fileContent(t, outFile)
			refusedInside(t, got, file, log)
		})
	}
}
