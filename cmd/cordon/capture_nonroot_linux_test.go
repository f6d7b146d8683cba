package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCaptureAsNonRoot: transparent capture as most users run cordon, not
// as root: under network "restricted" on bwrap, curl told to ignore the
// proxy, Python's urllib without a proxy handler and Node's built-in
// fetch resolve through the stub DNS and reach cordon's proxy, which
// refuses a host the lists do not name; the command holds no capability.
func TestCaptureAsNonRoot(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "cordon capture ")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	home, ws := filepath.Join(base, "home"), filepath.Join(base, "ws")
	for _, d := range []string{home, ws} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	script := `curl -sS -m 20 --noproxy '*' -w ' %{http_code}' http://curl.example.test/; echo " [curl $?]"
if command -v python3 >/dev/null; then python3 -c '
import urllib.request, urllib.error
o = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    o.open("http://py.example.test/", timeout=20)
except urllib.error.HTTPError as e:
    print(e.code, "[py]")
'; fi
if command -v node >/dev/null; then node -e 'fetch("http://node.example.test/").then(r => console.log(r.status, "[node]")).catch(e => console.log("error", String(e.cause), "[node]"))'; fi
grep CapEff /proc/self/status`
	cmd := exec.Command(cordonBin, "exec", "--backend", "bwrap", "--network", "restricted", "--workspace", ws, "--", "bash", "-c", script)
	cmd.Dir, cmd.Env = ws, append(os.Environ(), "HOME="+home, "XDG_STATE_HOME=", "XDG_CONFIG_HOME=", "XDG_CACHE_HOME=")
	if os.Geteuid() == 0 {
		require.NoError(t, os.Chown(home, 65534, 65534))
		require.NoError(t, os.Chown(ws, 65534, 65534))
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	b, err := cmd.CombinedOutput()
	out := string(b)
	require.NoError(t, err, out)
	assert.Contains(t, out, "curl.example.test:80 is not in allowed_domains", out)
	assert.Contains(t, out, " 403 [curl 0]", out)
	assert.Contains(t, out, "CapEff:\t0000000000000000", "the command keeps no capability")
	if _, err := exec.LookPath("python3"); err == nil {
		assert.Contains(t, out, "403 [py]", out)
	}
	if _, err := exec.LookPath("node"); err == nil {
		assert.Contains(t, out, "403 [node]", out)
	}
}
