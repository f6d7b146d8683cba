//go:build linux

package mcpserver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// swapMasked is a background command's watcher: on each new egress
// directory of cordon's in the host's /tmp it waits for the masked copy
// to be written, then renames over it a relative link to the real secret
// file, before bwrap binds the copy over that file for the next call.
const swapMasked = `
import ctypes, os, struct, sys
target, victim, marker = sys.argv[1], sys.argv[2], sys.argv[3]
libc = ctypes.CDLL(None, use_errno=True)
IN_CREATE, IN_CLOSE_WRITE = 0x100, 0x8
fd = libc.inotify_init()
wds = {libc.inotify_add_watch(fd, b"/tmp", IN_CREATE): "/tmp"}
ours = set()  # this session's directories: other sessions' are left alone
print("watching", flush=True)
while True:
    buf = os.read(fd, 65536)
    i = 0
    while i < len(buf):
        wd, mask, _, n = struct.unpack_from("iIII", buf, i)
        name = buf[i + 16:i + 16 + n].rstrip(b"\0").decode()
        i += 16 + n
        d = wds.get(wd)
        if d == "/tmp" and name.startswith("cordon-egress-"):
            sub = "/tmp/" + name
            wds[libc.inotify_add_watch(fd, sub.encode(), IN_CLOSE_WRITE)] = sub
            continue
        if not d or d == "/tmp":
            continue
        if name == "masked-0":
            try:
                if marker in open(d + "/masked-0").read():
                    ours.add(d)
            except OSError:
                pass
        if d in ours and name == victim:
            link = d + "/.swap"
            try:
                os.symlink("../.." + target, link)
                os.rename(link, d + "/" + victim)
                print("swapped", d, flush=True)
            except OSError as e:
                print("swap failed", e, flush=True)
`

// TestSecretFileMaskSwappedThroughWritableTmp: with the host's /tmp a
// writable root (extra_write_allow = ["/tmp"]), a background watcher
// waits for the masked copy of its next call's egress directory to
// replace it by a relative link to the real secret file, which bwrap
// would bind over the secret's path. It found the directories in /tmp (a
// red-team review); they now lie in the state directory, where no command
// writes, and the next call never reads the real value.
func TestSecretFileMaskSwappedThroughWritableTmp(t *testing.T) {
	const value = "gh-token-canary" // the harness puts it in cordon's environment
	w := newWorld(t)
	w.writeUserConfig(t, `
network = "restricted"
allowed_domains = ["localhost"]
extra_write_allow = ["/tmp"]

[secrets.github]
from_env = "GITHUB_TOKEN"
env = "GITHUB_TOKEN"
hosts = ["localhost"]
files = ["~/creds/token"]
`)
	tokenFile := filepath.Join(w.home, "creds", "token")
	require.NoError(t, os.MkdirAll(filepath.Dir(tokenFile), 0o755))
	require.NoError(t, os.WriteFile(tokenFile, []byte("rt39c-tmpswap token="+value+"\n"), 0o600))
	script := filepath.Join(w.ws, "swap.py")
	require.NoError(t, os.WriteFile(script, []byte(swapMasked), 0o644))

	cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--backend", "bwrap", "--approval", "never")
	bg := call(t, cs, "bash", map[string]any{"command": fmt.Sprintf("exec python3 -u swap.py %q masked-0 rt39c-tmpswap", tokenFile), "background": true, "yield_ms": 1000})
	require.False(t, bg.IsError, text(bg))
	awaitWatching(t, cs, text(bg))
	var outs []string
	for i := 0; i < 5; i++ {
		out := text(call(t, cs, "bash", map[string]any{"command": "cat ~/creds/token"}))
		outs = append(outs, out)
		if strings.Contains(out, value) {
			break
		}
		time.Sleep(100 * time.Millisecond) // not synchronisation: another try at the race
	}
	joined := strings.Join(outs, "\n---\n")
	require.NotContains(t, joined, value, "a command read the real secret file through its swapped masked copy:\n%s", joined)
}

// TestReadDenyFileThroughWritableTmpResolvConf: the same swap (a secret
// is configured only so that the watcher knows its own directories) of
// the stub DNS's resolv.conf, which bwrap binds over /etc/resolv.conf
// under every network restricted call, would have the next call read
// any read-deny file (here ~/.ssh/id_canary) there; it never does.
func TestReadDenyFileThroughWritableTmpResolvConf(t *testing.T) {
	w := newWorld(t)
	w.writeUserConfig(t, `
network = "restricted"
allowed_domains = ["localhost"]
extra_write_allow = ["/tmp"]

[secrets.github]
from_env = "GITHUB_TOKEN"
env = "GITHUB_TOKEN"
hosts = ["localhost"]
files = ["~/creds/token"]
`)
	// The secret's file only marks this session's egress directories for
	// the watcher (resolv.conf is there with no secret too).
	tokenFile := filepath.Join(w.home, "creds", "token")
	require.NoError(t, os.MkdirAll(filepath.Dir(tokenFile), 0o755))
	require.NoError(t, os.WriteFile(tokenFile, []byte("rt39c-resolv token=gh-token-canary\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "swap.py"), []byte(swapMasked), 0o644))
	cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--backend", "bwrap", "--approval", "never")
	bg := call(t, cs, "bash", map[string]any{"command": fmt.Sprintf("exec python3 -u swap.py %q resolv.conf rt39c-resolv", w.secret), "background": true, "yield_ms": 1000})
	require.False(t, bg.IsError, text(bg))
	awaitWatching(t, cs, text(bg))
	var outs []string
	for i := 0; i < 5; i++ {
		out := text(call(t, cs, "bash", map[string]any{"command": "cat /etc/resolv.conf"}))
		outs = append(outs, out)
		if strings.Contains(out, "SECRET-CANARY") {
			break
		}
		time.Sleep(100 * time.Millisecond) // not synchronisation: another try at the race
	}
	joined := strings.Join(outs, "\n---\n")
	require.NotContains(t, joined, "SECRET-CANARY", "a command read a read-deny file through the swapped resolv.conf:\n%s", joined)
}

// awaitWatching waits, on a busy machine as on a quiet one, until the
// background watcher p1 has said it watches (first is what bash returned).
func awaitWatching(t *testing.T, cs *mcp.ClientSession, first string) {
	t.Helper()
	seen := first
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(seen, "watching"); {
		require.True(t, time.Now().Before(deadline), "the watcher never started: %s", seen)
		seen += text(call(t, cs, "process_output", map[string]any{"process_id": "p1", "wait_ms": 5000}))
	}
}
