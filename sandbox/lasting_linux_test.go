package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Protection that lasts as long as the sandbox (lasting_linux.go): the
// human's own tools replace protected and read-deny files by rename while
// a sandbox lives — a background process (a cold launch) or a call in a
// warm sandbox — and the sandbox must not gain what the replacement would
// give it. Each test is judged by the host afterwards.

// lockedBuffer is an output that a test reads while the command writes.
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

// lastingBackend is a backend the lasting tests run on, and its fixture's
// backend.
type lastingBackend struct {
	name string
	prov func() Backend
}

var (
	lastingBwrap    = lastingBackend{"bwrap", func() Backend { return newBwrap() }}
	lastingLandlock = lastingBackend{"landlock", func() Backend { return newLandlock() }}
)

// eachLastingStart runs test on each backend with a command started cold
// (as a background process is) and in a warm sandbox (as a foreground
// call is).
func eachLastingStart(t *testing.T, backends []lastingBackend, test func(t *testing.T, f *fixture, start func(p ExecutionPolicy, script string) (*Process, *lockedBuffer), ex *Executor)) {
	for _, b := range backends {
		for _, warm := range []bool{false, true} {
			name := b.name + "/" + map[bool]string{false: "cold", true: "warm"}[warm]
			t.Run(name, func(t *testing.T) { lastingStart(t, b, warm, test) })
		}
	}
}

func lastingStart(t *testing.T, b lastingBackend, warm bool, test func(t *testing.T, f *fixture, start func(p ExecutionPolicy, script string) (*Process, *lockedBuffer), ex *Executor)) {
	f := newFixture(t, b.prov())
	ex := &Executor{Backends: &Backends{Forced: b.name}, Requirement: Required, Warm: warm}
	t.Cleanup(ex.Close)
	start := func(p ExecutionPolicy, script string) (*Process, *lockedBuffer) {
		t.Helper()
		if warm {
			// A sandbox warm before the call, as the session's is.
			_, err := ex.Run(t.Context(), p, RunSpec{Argv: []string{"true"}, Dir: p.WorkspaceRoot, Env: Environ(os.Environ(), nil)})
			require.NoError(t, err)
			require.Len(t, ex.warm.idle, 1, "a warm sandbox must be idle before the call")
		}
		out := &lockedBuffer{}
		proc, err := ex.start(p, RunSpec{Argv: []string{"bash", "-c", script}, Dir: p.WorkspaceRoot,
			Env: Environ(os.Environ(), nil), Stdout: out, Stderr: out, OwnGroup: true, WaitDelay: 2 * time.Second}, warm)
		require.NoError(t, err)
		t.Cleanup(func() { proc.Kill(); <-proc.Done() })
		if warm {
			_, cold := proc.run.(*launch)
			require.False(t, cold, "the call must run in the warm sandbox")
		}
		return proc, out
	}
	test(t, f, start, ex)
}

// pollUntil polls until cond holds, failing after a generous deadline.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func gitOnHost(t *testing.T, dir string, args ...string) string {
	t.Helper()
	var out []byte
	var err error
	// A command in the sandbox may be trying git config at the same
	// moment: its config.lock (made, then removed when the rename over
	// the read-only config fails) makes the human's git fail for that
	// moment, as it would the human's; the human tries again.
	for try := 0; ; try++ {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+filepath.Dir(dir))
		out, err = cmd.CombinedOutput()
		if err == nil || try == 50 || !strings.Contains(string(out), "could not lock config file") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// TestLastingGitConfigReplacedOnTheHost: the human's `git config` renames
// a new .git/config over the one the sandbox keeps read-only, while a
// workspace-write command lives and keeps trying to add core.fsmonitor.
// The sandbox must end (protection-lost), nothing it wrote may stay, and
// the human's next `git status` must not run the planted program.
func TestLastingGitConfigReplacedOnTheHost(t *testing.T) {
	eachLastingStart(t, []lastingBackend{lastingBwrap}, func(t *testing.T, f *fixture, start func(ExecutionPolicy, string) (*Process, *lockedBuffer), ex *Executor) {
		gitOnHost(t, f.ws, "init", "-q")
		canary := filepath.Join(f.base, "fsmonitor-ran")
		monitor := filepath.Join(f.base, "monitor.sh")
		require.NoError(t, os.WriteFile(monitor, []byte("#!/bin/sh\ntouch '"+canary+"'\n"), 0o755))
		p := f.policy(WorkspaceWrite, NetworkDeny)
		config := filepath.Join(f.ws, ".git", "config")
		require.Contains(t, p.Protected, config)

		// The command tries, over and over, what a prompt-injected model
		// would: git config through a lock file and rename, and a plain
		// append.
		script := `n=0; while :; do
  git config core.fsmonitor '` + monitor + `' 2>/dev/null && echo WROTE
  printf '[core]\n\tfsmonitor = ` + monitor + `\n' >> .git/config 2>/dev/null && echo APPENDED
  n=$((n+1)); echo "try $n"; sleep 0.02
done`
		proc, out := start(p, script)
		pollUntil(t, "the command's first tries", func() bool { return strings.Contains(out.String(), "try 3") })
		require.NotContains(t, out.String(), "WROTE", "the protection must hold before the rename")

		gitOnHost(t, f.ws, "config", "user.name", "Human")

		select {
		case <-proc.Done():
		case <-time.After(30 * time.Second):
			t.Fatalf("the sandbox lived on after its protection moved; output:\n%s", out.String())
		}
		res := proc.Result()
		assert.Equal(t, ProtectionLost, res.Ending, "output:\n%s", out.String())
		assert.True(t, res.LostProtection)

		cfg, err := os.ReadFile(config)
		require.NoError(t, err)
		assert.NotContains(t, string(cfg), "fsmonitor", "what the sandbox wrote through the loss must not stay")
		gitOnHost(t, f.ws, "status")
		assert.NoFileExists(t, canary, "the human's git status ran the planted fsmonitor")
		if ex.Warm {
			for _, z := range ex.warm.idle {
				assert.NotEqual(t, "", z.key)
				_, lost := z.lost.get()
				assert.False(t, lost, "a warm sandbox that lost protection is never reused")
			}
		}
	})
}

// TestLastingHostChangeKeptAside: the human's `git config user.name`
// during a live sandbox (which keeps trying to add core.fsmonitor) is not
// lost: the guard restores .git/config as it was before the call, and
// keeps the human's version beside it, with its permissions, for them to
// compare; the planted program is in effect nowhere git reads.
func TestLastingHostChangeKeptAside(t *testing.T) {
	eachLastingStart(t, []lastingBackend{lastingBwrap}, func(t *testing.T, f *fixture, start func(ExecutionPolicy, string) (*Process, *lockedBuffer), ex *Executor) {
		gitOnHost(t, f.ws, "init", "-q")
		canary := filepath.Join(f.base, "fsmonitor-ran")
		monitor := filepath.Join(f.base, "monitor.sh")
		require.NoError(t, os.WriteFile(monitor, []byte("#!/bin/sh\ntouch '"+canary+"'\n"), 0o755))
		config := filepath.Join(f.ws, ".git", "config")
		require.NoError(t, os.Chmod(config, 0o640))
		before, err := os.ReadFile(config)
		require.NoError(t, err)
		p := f.policy(WorkspaceWrite, NetworkDeny)

		script := `n=0; while :; do
  git config core.fsmonitor '` + monitor + `' 2>/dev/null
  printf '[core]\n\tfsmonitor = ` + monitor + `\n' >> .git/config 2>/dev/null
  n=$((n+1)); echo "try $n"; sleep 0.02
done`
		proc, out := start(p, script)
		pollUntil(t, "the command's first tries", func() bool { return strings.Contains(out.String(), "try 3") })

		gitOnHost(t, f.ws, "config", "user.name", "Human Name")

		select {
		case <-proc.Done():
		case <-time.After(30 * time.Second):
			t.Fatalf("the sandbox lived on after its protection moved; output:\n%s", out.String())
		}
		res := proc.Result()
		require.Equal(t, ProtectionLost, res.Ending, "output:\n%s", out.String())

		// The config in effect is the one from before the call.
		after, err := os.ReadFile(config)
		require.NoError(t, err)
		assert.Equal(t, string(before), string(after), "the config in effect must be the one from before the call")

		// The human's version is beside it, said so, with its permissions.
		kept, err := filepath.Glob(config + ".cordon-host-*")
		require.NoError(t, err)
		require.Len(t, kept, 1, "the human's version must be set aside; undone: %v", res.Undone)
		assert.Equal(t, "Human Name\n", gitOnHost(t, f.ws, "config", "--file", kept[0], "user.name"))
		fi, err := os.Stat(kept[0])
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "the set-aside version keeps the host's permissions")
		var note string
		for _, c := range res.Undone {
			if c.Path == config {
				assert.Equal(t, kept[0], c.HostKept)
				note = c.HostNote()
			}
		}
		assert.Contains(t, note, "the host changed "+config+" while a sandbox lived")
		assert.Contains(t, note, "kept yours as "+kept[0])

		gitOnHost(t, f.ws, "status")
		assert.NoFileExists(t, canary, "the human's git status ran the planted fsmonitor")
		assert.NotContains(t, gitOnHost(t, f.ws, "config", "--list", "--show-origin"), "fsmonitor")
	})
}

// TestLastingCredentialStoreReplacedOnTheHost: `git credential-store`
// (every https push) renames a new ~/.git-credentials over the hidden one
// while a read-only command lives and keeps reading it: the new secret
// must never reach the command.
func TestLastingCredentialStoreReplacedOnTheHost(t *testing.T) {
	eachLastingStart(t, []lastingBackend{lastingBwrap, lastingLandlock}, func(t *testing.T, f *fixture, start func(ExecutionPolicy, string) (*Process, *lockedBuffer), ex *Executor) {
		creds := filepath.Join(f.home, ".git-credentials")
		require.NoError(t, os.WriteFile(creds, []byte("https://old:OLD-SECRET@example.com\n"), 0o600))
		p := f.policy(ReadOnly, NetworkDeny)
		require.Contains(t, p.ReadDeny, creds)

		script := `n=0; while :; do cat '` + creds + `' 2>&1; n=$((n+1)); echo "try $n"; sleep 0.02; done`
		proc, out := start(p, script)
		pollUntil(t, "the command's first tries", func() bool { return strings.Contains(out.String(), "try 3") })
		require.NotContains(t, out.String(), "OLD-SECRET", "the entry must be hidden before the rename")

		store := exec.Command("git", "credential-store", "--file", creds, "store")
		store.Stdin = strings.NewReader("protocol=https\nhost=example.com\nusername=new\npassword=NEW-SECRET\n\n")
		if b, err := store.CombinedOutput(); err != nil {
			t.Fatalf("git credential-store: %v\n%s", err, b)
		}
		b, err := os.ReadFile(creds)
		require.NoError(t, err)
		require.Contains(t, string(b), "NEW-SECRET", "the host must hold the new secret")

		// The command goes on (Landlock refuses the new file's read) or
		// ends (the watch killed it): either way, some more tries or its
		// end, and never the secret.
		mark := strings.Count(out.String(), "try ")
		pollUntil(t, "more tries or the end", func() bool {
			select {
			case <-proc.Done():
				return true
			default:
				return strings.Count(out.String(), "try ") > mark+20
			}
		})
		proc.Kill()
		<-proc.Done()
		got := out.String()
		assert.False(t, strings.Contains(got, "NEW-SECRET"), "the sandbox read the replaced credentials")
		assert.False(t, strings.Contains(got, "OLD-SECRET"), "the sandbox read the credentials")
	})
}

// TestLastingWatch: the watch fires for a replacement, a removal and a
// move of a watched entry, once per sandbox, and not for writes in place,
// for other entries, or after it stopped.
func TestLastingWatch(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config")
	require.NoError(t, os.WriteFile(file, []byte("a"), 0o644))
	fired := make(chan string, 4)
	stop, err := watchLasting([]string{file}, func(path string) { fired <- path })
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, []byte("written in place"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other"), []byte("x"), 0o644))
	require.NoError(t, os.Rename(filepath.Join(dir, "other"), filepath.Join(dir, "other2")))
	select {
	case p := <-fired:
		t.Fatalf("fired for %s without a replacement", p)
	case <-time.After(200 * time.Millisecond):
	}
	for _, replace := range []func(){
		func() { // git's lock file and rename
			os.WriteFile(file+".lock", []byte("b"), 0o644)
			os.Rename(file+".lock", file)
		},
		func() { os.Remove(file) },
		func() { os.Rename(file, file+".moved") },
	} {
		os.WriteFile(file, []byte("a"), 0o644)
		stop()
		stop, err = watchLasting([]string{file}, func(path string) { fired <- path })
		require.NoError(t, err)
		replace()
		select {
		case p := <-fired:
			assert.Equal(t, file, p)
		case <-time.After(30 * time.Second):
			t.Fatal("the watch did not fire")
		}
	}
	stop()
	os.WriteFile(file, []byte("a"), 0o644)
	os.Remove(file)
	select {
	case p := <-fired:
		t.Fatalf("fired for %s after it stopped", p)
	case <-time.After(200 * time.Millisecond):
	}
}
