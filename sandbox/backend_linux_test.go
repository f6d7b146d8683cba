package sandbox

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fixture is one sandboxed world: a workspace, a directory outside it, a
// fake home with credentials, a state dir and a session tmp, all under
// /var/tmp so they stay visible inside bwrap.
type fixture struct {
	t                                     testing.TB
	prov                                  Backend
	base, ws, outside, home, state, tmp   string
	outsideFile, wsFile, secret, sysprobe string
}

func newFixture(t testing.TB, prov Backend) *fixture {
	t.Helper()
	base := testBase(t)
	f := &fixture{t: t, prov: prov, base: base,
		ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"),
		home: filepath.Join(base, "home"), state: filepath.Join(base, "state")}
	for _, d := range []string{f.ws, f.outside, f.home, filepath.Join(f.home, ".ssh"), f.state} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	f.outsideFile = filepath.Join(f.outside, "file.txt")
	f.wsFile = filepath.Join(f.ws, "file.txt")
	f.secret = filepath.Join(f.home, ".ssh", "id_canary")
	require.NoError(t, os.WriteFile(f.outsideFile, []byte("outside\n"), 0o644))
	require.NoError(t, os.WriteFile(f.wsFile, []byte("inside\n"), 0o644))
	require.NoError(t, os.WriteFile(f.secret, []byte("SECRET-CANARY\n"), 0o600))
	tmp, err := NewSessionTmp(f.state)
	require.NoError(t, err)
	t.Cleanup(func() { tmp.Remove() })
	f.tmp = tmp.Path
	f.sysprobe = sysprobePath(t)
	return f
}

func (f *fixture) policy(mode Mode, network Network) ExecutionPolicy {
	f.t.Helper()
	svc := PolicyService{Settings: Settings{
		Mode: mode, Network: network, Workspace: f.ws, Home: f.home,
		StateDir: f.state, ConfigDir: filepath.Join(f.home, ".config", "cordon"),
	}}
	p, err := svc.Resolve(Request{TmpDir: f.tmp, SessionID: "test"})
	require.NoError(f.t, err)
	return p
}

// run runs argv confined and returns its merged output and exit code.
func (f *fixture) run(p ExecutionPolicy, argv ...string) (string, int) {
	f.t.Helper()
	out, o := f.launch(p, argv...)
	return out, o.ExitCode
}

// launch runs argv confined and returns its output and outcome.
func (f *fixture) launch(p ExecutionPolicy, argv ...string) (string, Outcome) {
	f.t.Helper()
	cp, err := p.ToConfined()
	require.NoError(f.t, err)
	c, err := f.prov.Confine(argv, cp)
	require.NoError(f.t, err)
	l, err := c.newLaunch()
	require.NoError(f.t, err)
	var out bytes.Buffer
	l.Cmd.Stdout, l.Cmd.Stderr, l.Cmd.Dir = &out, &out, p.WorkspaceRoot
	l.Cmd.Env = Environ(os.Environ(), nil)
	require.NoError(f.t, l.Start())
	o, err := l.Wait()
	require.NoError(f.t, err)
	require.Empty(f.t, o.RunnerFailure, "runner failed: %s", out.String())
	require.NoError(f.t, o.GuardErr)
	return out.String(), o
}

func (f *fixture) sh(p ExecutionPolicy, script string, args ...string) (string, int) {
	f.t.Helper()
	return f.run(p, append([]string{"/bin/sh", "-c", script, "sh"}, args...)...)
}

func (f *fixture) probe(p ExecutionPolicy, args ...string) string {
	f.t.Helper()
	out, _ := f.run(p, append([]string{f.sysprobe, "sysprobe"}, args...)...)
	return strings.TrimSpace(out)
}

func eachBackend(t *testing.T, fn func(t *testing.T, prov Backend)) {
	for _, prov := range []Backend{newBwrap(), newLandlock()} {
		t.Run(prov.Name(), func(t *testing.T) {
			res := probeBackend(prov, t.TempDir())
			require.True(t, res.OK, "backend %s must work on this machine: %s", prov.Name(), res.Reason)
			fn(t, prov)
		})
	}
}

// mutations are the ways a command can change a file system entry.
var mutations = []struct{ name, script string }{
	{"create", `printf new > "$1.created"`},
	{"append", `printf more >> "$1"`},
	{"truncate", `: > "$1"`},
	{"truncate-syscall", `truncate -s 0 "$1"`},
	{"chmod", `chmod 0777 "$1"`},
	{"rename", `mv "$1" "$1.renamed"`},
	{"delete", `rm -f "$1"`},
	{"hardlink", `ln "$1" "$1.hardlink"`},
	{"symlink", `ln -s /etc/passwd "$1.symlink"`},
	{"mkdir", `mkdir "$1.dir"`},
	{"touch", `touch "$1"`},
}

func TestBackendReadOnly(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		p := f.policy(ReadOnly, NetworkAllow)
		for _, target := range []string{f.wsFile, f.outsideFile} {
			for _, m := range mutations {
				t.Run(m.name+"/"+filepath.Base(filepath.Dir(target)), func(t *testing.T) {
					before := testenv.Snapshot(t, f.ws, f.outside)
					out, code := f.sh(p, m.script, target)
					assert.NotEqual(t, 0, code, "%s must fail: %s", m.name, out)
					assert.Equal(t, before, testenv.Snapshot(t, f.ws, f.outside), "the file system changed")
				})
			}
		}
		t.Run("read anywhere", func(t *testing.T) {
			out, code := f.sh(p, `cat "$1" "$2" /etc/passwd >/dev/null && cat "$1"`, f.outsideFile, f.wsFile)
			assert.Equal(t, 0, code, out)
			assert.Equal(t, "outside\n", out)
		})
		t.Run("dev null writable", func(t *testing.T) {
			out, code := f.sh(p, `echo x > /dev/null && echo ok`)
			assert.Equal(t, 0, code, out)
		})
		t.Run("private tmp", func(t *testing.T) {
			name := fmt.Sprintf("cordon-private-%d", time.Now().UnixNano())
			out, code := f.sh(p, `echo data > "$TMPDIR/$1" && cat "$TMPDIR/$1"`, name)
			assert.Equal(t, 0, code, out)
			assert.FileExists(t, filepath.Join(f.tmp, name), "the session tmp holds the file")
			assert.NoFileExists(t, filepath.Join("/tmp", name), "nothing appears in the host's /tmp")
			if prov.Name() == "bwrap" {
				out, code := f.sh(p, `echo data > /tmp/"$1"x && ls /tmp`, name)
				assert.Equal(t, 0, code, out)
				assert.NoFileExists(t, filepath.Join("/tmp", name+"x"))
				assert.FileExists(t, filepath.Join(f.tmp, name+"x"))
			}
		})
	})
}

func TestBackendWorkspaceWrite(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		p := f.policy(WorkspaceWrite, NetworkAllow)
		t.Run("writes inside work", func(t *testing.T) {
			out, code := f.sh(p, `printf a > new.txt && mkdir -p sub/dir && printf b > sub/dir/f && mv new.txt sub/ && cat sub/new.txt sub/dir/f`)
			assert.Equal(t, 0, code, out)
			assert.Equal(t, "ab", out)
			data, err := os.ReadFile(filepath.Join(f.ws, "sub", "new.txt"))
			require.NoError(t, err)
			assert.Equal(t, "a", string(data))
		})
		require.NoError(t, os.Symlink(f.outside, filepath.Join(f.ws, "link-to-outside")))
		require.NoError(t, os.Symlink(f.outsideFile, filepath.Join(f.ws, "link-to-file")))
		escapes := []struct{ name, script string }{
			{"absolute", `printf x >> "$1"`},
			{"create outside", `printf x > "$(dirname "$1")/new"`},
			{"dotdot", `printf x >> ../outside/file.txt`},
			{"symlinked dir", `printf x > link-to-outside/new; printf x >> link-to-outside/file.txt`},
			{"symlinked file", `printf x >> link-to-file`},
			{"proc self root", `printf x >> /proc/self/root"$1"`},
			{"proc self cwd", `cd "$(dirname "$1")" && printf x >> /proc/self/cwd/file.txt`},
			{"hard link", `ln "$1" hardlink && printf x >> hardlink`},
			{"rename out", `mv file.txt "$(dirname "$1")/moved"`},
		}
		for _, e := range escapes {
			t.Run(e.name, func(t *testing.T) {
				before := testenv.Snapshot(t, f.outside)
				out, code := f.sh(p, e.script, f.outsideFile)
				assert.NotEqual(t, 0, code, out)
				assert.Equal(t, before, testenv.Snapshot(t, f.outside), "outside changed: %s", out)
				assert.NoFileExists(t, filepath.Join(f.ws, "hardlink"))
			})
		}
	})
}

func TestBackendProcessConfinement(t *testing.T) {
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		p := f.policy(WorkspaceWrite, NetworkAllow)
		t.Run("no new privs and no capabilities", func(t *testing.T) {
			out, code := f.sh(p, `grep -E '^(NoNewPrivs|CapEff|CapPrm|CapBnd|CapAmb|Seccomp):' /proc/self/status`)
			require.Equal(t, 0, code, out)
			assert.Contains(t, out, "NoNewPrivs:\t1")
			for _, c := range []string{"CapEff", "CapPrm", "CapAmb"} {
				assert.Contains(t, out, c+":\t0000000000000000")
			}
			assert.Contains(t, out, "Seccomp:\t2")
		})
		t.Run("no inherited descriptors", func(t *testing.T) {
			extra, err := os.Open("/etc/hostname") // would leak as fd 3+ if not closed
			require.NoError(t, err)
			defer extra.Close()
			assert.Equal(t, "0 1 2", f.probe(p, "fds"))
			out, code := f.sh(p, `ls /proc/$$/fd`)
			assert.Equal(t, 0, code)
			assert.Equal(t, []string{"0", "1", "2"}, strings.Fields(out), "the shell's own descriptors")
		})
		t.Run("ptrace refused", func(t *testing.T) {
			assert.Equal(t, "EPERM", f.probe(p, "ptrace", "1"))
		})
		t.Run("io_uring refused", func(t *testing.T) {
			assert.Equal(t, "EPERM", f.probe(p, "io_uring"))
		})
		t.Run("TIOCSTI refused", func(t *testing.T) {
			assert.Equal(t, "EPERM", f.probe(p, "tiocsti"))
			assert.Equal(t, "EPERM", f.probe(p, "tiocsti-highbits"), "high bits must not bypass the filter")
		})
		t.Run("vsock refused", func(t *testing.T) {
			assert.Equal(t, "EPERM", f.probe(p, "vsock"))
		})
		t.Run("host processes unreachable", func(t *testing.T) {
			got := f.probe(p, "kill0", strconv.Itoa(os.Getpid()))
			assert.Contains(t, []string{"ESRCH", "EPERM"}, got)
		})
		t.Run("default signal dispositions", func(t *testing.T) {
			// What cordon's ancestry ignored (nohup: SIGHUP) the command
			// does not: it starts as a fresh process would.
			signal.Ignore(syscall.SIGHUP)
			defer signal.Reset(syscall.SIGHUP)
			out, code := f.sh(p, `grep SigIgn /proc/self/status`)
			require.Equal(t, 0, code, out)
			assert.Equal(t, "SigIgn:\t0000000000000000\n", out)
		})
		t.Run("command may run child processes", func(t *testing.T) {
			out, code := f.sh(p, `echo $(echo nested) | cat`)
			assert.Equal(t, 0, code)
			assert.Equal(t, "nested\n", out)
		})
	})
}

func TestBwrapNamespaces(t *testing.T) {
	prov := newBwrap()
	require.NoError(t, prov.Available())
	f := newFixture(t, prov)
	p := f.policy(WorkspaceWrite, NetworkAllow)
	t.Run("nested user namespaces refused", func(t *testing.T) {
		assert.NotEqual(t, "ok", f.probe(p, "unshare-user"))
		out, code := f.sh(p, `unshare -U true`)
		assert.NotEqual(t, 0, code, out)
	})
	t.Run("new session", func(t *testing.T) {
		assert.Equal(t, "ok", f.probe(p, "session-leader"))
	})
	t.Run("pid namespace", func(t *testing.T) {
		assert.Equal(t, "ESRCH", f.probe(p, "kill0", strconv.Itoa(os.Getpid())))
	})
}

func TestBackendNetworkDeny(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		assert.Equal(t, "ok", f.probe(f.policy(WorkspaceWrite, NetworkAllow), "connect", addr), "network allow reaches the listener")
		deny := f.policy(WorkspaceWrite, NetworkDeny)
		assert.NotEqual(t, "ok", f.probe(deny, "connect", addr))
		assert.Equal(t, "EPERM", f.probe(deny, "socket-unix"))
		assert.Equal(t, "ok", f.probe(deny, "socketpair"), "socketpair stays allowed")
	})
}

// TestBackendNetworkSocketFamilies: under network deny and restricted
// the filter refuses every socket family but the few the mode needs —
// netlink (interface queries) and, under restricted, IPv4 (the proxy) —
// so a family nobody listed (SMC, which falls back to TCP outside
// Landlock's TCP rules; RXRPC, kernel UDP; TIPC; RDS; ALG) is refused by
// the filter (EPERM), not merely absent from this kernel (EAFNOSUPPORT).
func TestBackendNetworkSocketFamilies(t *testing.T) {
	const (
		afSMC, afRXRPC, afTIPC, afRDS, afALG = 43, 33, 30, 21, 38
		highBits                             = "0x100000010" // AF_NETLINK with a high bit set
	)
	others := []int{afSMC, afRXRPC, afTIPC, afRDS, afALG, unix.AF_UNIX, unix.AF_INET6, unix.AF_PACKET, unix.AF_VSOCK}
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		t.Run("deny", func(t *testing.T) {
			deny := f.policy(WorkspaceWrite, NetworkDeny)
			for _, fam := range append(others, unix.AF_INET) {
				assert.Equal(t, "EPERM", f.probe(deny, "socket", strconv.Itoa(fam)), "family %d", fam)
			}
			assert.Equal(t, "EPERM", f.probe(deny, "socket", highBits, strconv.Itoa(unix.SOCK_RAW)))
			assert.Equal(t, "ok", f.probe(deny, "socket", strconv.Itoa(unix.AF_NETLINK), strconv.Itoa(unix.SOCK_RAW)), "netlink stays allowed")
			assert.Equal(t, "ok", f.probe(deny, "socketpair"), "socketpair stays allowed")
		})
		t.Run("restricted", func(t *testing.T) {
			var script strings.Builder
			for _, fam := range others {
				fmt.Fprintf(&script, "echo %d $(%s sysprobe socket %d)\n", fam, f.sysprobe, fam)
			}
			fmt.Fprintf(&script, "echo high $(%s sysprobe socket %s %d)\n", f.sysprobe, highBits, unix.SOCK_RAW)
			fmt.Fprintf(&script, "echo netlink $(%s sysprobe socket %d %d)\n", f.sysprobe, unix.AF_NETLINK, unix.SOCK_RAW)
			fmt.Fprintf(&script, "echo inet $(%s sysprobe socket %d)\n", f.sysprobe, unix.AF_INET)
			out, _, _ := f.restricted(nil, nil, script.String())
			for _, fam := range others {
				assert.Contains(t, out, fmt.Sprintf("%d EPERM\n", fam), "family %d: %s", fam, out)
			}
			assert.Contains(t, out, "high EPERM\n", out)
			assert.Contains(t, out, "netlink ok\n", out)
			assert.Contains(t, out, "inet ok\n", "IPv4 TCP reaches the proxy: %s", out)
		})
	})
}

// TestBackendDiesWithCordon starts a confined sleep from a child process
// and kills that child: nothing of the sandbox may survive it.
func TestBackendDiesWithCordon(t *testing.T) {
	if os.Getenv("CORDON_TEST_DIE_PARENT") != "" {
		return
	}
	eachBackend(t, func(t *testing.T, prov Backend) {
		token := fmt.Sprintf("cordon-orphan-%d", time.Now().UnixNano())
		cmd := exec.Command(os.Args[0], "-test.run", "^TestHelperParent$")
		testBase(t) // the root the child's fixture goes in
		cmd.Env = append(os.Environ(), "CORDON_TEST_PARENT_BACKEND="+prov.Name(), "CORDON_TEST_TOKEN="+token, testRootEnv+"="+testRoot)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		buf := make([]byte, 4096)
		n, _ := stdout.Read(buf) // "started WS STATE" once the confined command runs
		fields := strings.Fields(string(buf[:n]))
		require.Len(t, fields, 3, string(buf[:n]))
		require.Equal(t, "started", fields[0])
		ws, state := fields[1], fields[2]
		require.NotEmpty(t, processesWith(token), "the confined command should be running")
		require.NoError(t, cmd.Process.Kill())
		cmd.Wait()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) && len(processesWith(token)) > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		assert.Empty(t, processesWith(token), "confined processes outlived cordon")

		// Nothing was left on the host to clean up: protection makes no
		// mount stubs.
		entries, err := os.ReadDir(ws)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		assert.ElementsMatch(t, []string{"file.txt", "running"}, names, "no stub may be left in the workspace")
		_ = state
	})
}

// TestHelperParent is the child of TestBackendDiesWithCordon.
func TestHelperParent(t *testing.T) {
	backend := os.Getenv("CORDON_TEST_PARENT_BACKEND")
	if backend == "" {
		t.Skip("helper process for TestBackendDiesWithCordon")
	}
	prov := byName(backend)
	f := newFixture(t, prov)
	p := f.policy(WorkspaceWrite, NetworkAllow)
	cp, _ := p.ToConfined()
	// Wait until the command itself runs: bwrap has a window during its
	// own set-up in which its child does not yet die with it.
	marker := filepath.Join(f.ws, "running")
	script := `touch "$1"; sleep 60; : ` + os.Getenv("CORDON_TEST_TOKEN")
	c, err := prov.Confine([]string{"/bin/sh", "-c", script, "sh", marker}, cp)
	require.NoError(t, err)
	l, _ := c.newLaunch()
	require.NoError(t, l.Start())
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Println("started", f.ws, f.state)
	l.Wait()
}

func processesWith(token string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(cmdline, []byte(token)) && !bytes.Contains(cmdline, []byte("-test.run")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestRuntimeDirSocketsUnreachable: a socket in $XDG_RUNTIME_DIR (the D-Bus
// session bus lives there, and it can start unconfined processes through
// systemd-run --user) must not be reachable from a bwrap sandbox.
func TestRuntimeDirSocketsUnreachable(t *testing.T) {
	prov := newBwrap()
	f := newFixture(t, prov)
	rt := filepath.Join(f.base, "run-user")
	require.NoError(t, os.Mkdir(rt, 0o700))
	sock := filepath.Join(rt, "bus")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Setenv("XDG_RUNTIME_DIR", rt)
	out, code := f.sh(f.policy(WorkspaceWrite, NetworkAllow), `ls -A "$1"; test -S "$1/bus" && echo REACHABLE; true`, rt)
	assert.Equal(t, 0, code, out)
	assert.NotContains(t, out, "REACHABLE")
	assert.NotContains(t, out, "bus")
}
