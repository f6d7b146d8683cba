//go:build linux

// Package escape_test is cordon's adversarial suite: a table of known
// sandbox-escape techniques run against every Linux backend on this machine
// (bwrap, landlock), in both confined modes, through `cordon exec` and
// through the MCP `bash` tool. Every case proves its verdict on the file
// system (and on listeners, terminals and processes), never on an error
// message alone. See README.md for the list.
package escape_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// bin holds the binaries the suite drives: cordon, its lean helper and the
// probe (this test binary, copied where every sandbox can see it).
var bin struct {
	dir, cordon, helper, probe string
}

// root holds every world; it lives under /var/tmp because bwrap gives the
// sandbox a private /tmp.
var root string

// hostDocker is /run/docker.sock when the suite created it (no Docker
// daemon runs here): the real path the Docker CLI uses, served by a sink.
var hostDocker *sink

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == probeArg {
		os.Exit(probe(os.Args[2:]))
	}
	joinSessionKeyring()
	code := func() int {
		var err error
		root, err = os.MkdirTemp("/var/tmp", "cordon-escape-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(root)
		os.Chmod(root, 0o755)
		bin.dir = filepath.Join(root, "bin")
		os.Mkdir(bin.dir, 0o755)
		bin.cordon = filepath.Join(bin.dir, "cordon")
		bin.helper = filepath.Join(bin.dir, "cordon-helper")
		bin.probe = filepath.Join(bin.dir, "probe")
		for pkg, out := range map[string]string{"../../cmd/cordon": bin.cordon, "../../cmd/cordon-helper": bin.helper} {
			if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, b)
				return 1
			}
		}
		if err := copyFile(mustExecutable(), bin.probe, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "copying the probe:", err)
			return 1
		}
		etcBackup = backupSystemFiles()
		defer restoreSystemFiles()
		hostDocker = startHostDocker()
		defer hostDocker.close()
		// The positive controls run attacks unconfined, and one of them
		// aims at this very process's cwd through /proc/PID/cwd.
		defer os.Remove("new.txt")
		defer os.Remove("cwd-target.txt")
		return m.Run()
	}()
	os.Exit(code)
}

// joinSessionKeyring re-executes the suite in a session keyring of its
// own, with the user keyring linked in, as pam_keyinit gives a login
// session: every cordon the suite starts inherits it, so the keys that
// the session-keyring case plants there are the keys a confined command
// would find. (Without one, each process that names @s gets a fresh
// keyring of its own, and the case could prove nothing.) A keyctl(2) call
// here would not do: it changes the calling thread only, and Go forks
// from any thread.
func joinSessionKeyring() {
	const mark = "CORDON_ESCAPE_SESSION_KEYRING"
	kc, err := exec.LookPath("keyctl")
	if err != nil || os.Getenv(mark) != "" {
		return
	}
	os.Setenv(mark, "1")
	args := append([]string{"keyctl", "session", "-", "sh", "-c", `keyctl link @u @s >/dev/null && exec "$0" "$@"`, mustExecutable()}, os.Args[1:]...)
	err = syscall.Exec(kc, args, os.Environ())
	fmt.Fprintln(os.Stderr, "joining a session keyring:", err) // only if exec failed
}

func mustExecutable() string {
	p, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return p
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".part"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// startHostDocker listens on /run/docker.sock when nothing is there, so
// that the Docker case attacks the real path (cordon covers it only if it
// exists). It is removed when the suite ends.
func startHostDocker() *sink {
	const path = "/run/docker.sock"
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil // a real daemon: leave it alone
		}
		os.Remove(path) // a stale socket of an earlier run
	}
	s, err := listenSink("unix", path)
	if err != nil {
		return nil
	}
	s.remove = path
	return s
}

// System files a case might reach: backed up before the suite and restored
// if an escape changed them.
var systemFiles = []string{"/etc/hosts", "/etc/ld.so.preload", "/etc/environment"}

var etcBackup map[string][]byte

func backupSystemFiles() map[string][]byte {
	b := map[string][]byte{}
	for _, p := range systemFiles {
		if data, err := os.ReadFile(p); err == nil {
			b[p] = data
		}
	}
	return b
}

// restoreSystemFiles puts back what an escape may have changed; it
// reports whether anything had to be restored.
func restoreSystemFiles() []string {
	var changed []string
	for _, p := range systemFiles {
		old, had := etcBackup[p]
		cur, err := os.ReadFile(p)
		switch {
		case !had && err == nil:
			os.Remove(p)
			changed = append(changed, p+" (created)")
		case had && (err != nil || string(cur) != string(old)):
			os.WriteFile(p, old, 0o644)
			changed = append(changed, p+" (modified)")
		}
	}
	return changed
}

// sink is a listener outside the sandbox that records what reaches it.
type sink struct {
	ln     net.Listener
	pc     net.PacketConn
	remove string
	mu     sync.Mutex
	got    []string
	conns  int
}

func listenSink(network, addr string) (*sink, error) {
	s := &sink{}
	if network == "udp" {
		pc, err := net.ListenPacket("udp4", addr)
		if err != nil {
			return nil, err
		}
		s.pc = pc
		go func() {
			buf := make([]byte, 4096)
			for {
				n, _, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				s.mu.Lock()
				s.conns++
				s.got = append(s.got, string(buf[:n]))
				s.mu.Unlock()
			}
		}()
		return s, nil
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, err
	}
	s.ln = ln
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(3 * time.Second))
				data, _ := io.ReadAll(io.LimitReader(c, 1<<16))
				s.mu.Lock()
				s.got = append(s.got, "connected:"+string(data))
				s.mu.Unlock()
			}()
		}
	}()
	return s, nil
}

func (s *sink) addr() string {
	if s.pc != nil {
		return s.pc.LocalAddr().String()
	}
	return s.ln.Addr().String()
}

// saw reports what reached the sink carrying this token (a connection the
// probe made writes the token first).
func (s *sink) saw(token string) []string {
	if s == nil {
		return nil
	}
	deadline := time.Now().Add(150 * time.Millisecond)
	for {
		s.mu.Lock()
		var hits []string
		for _, g := range s.got {
			if strings.Contains(g, token) {
				hits = append(hits, g)
			}
		}
		s.mu.Unlock()
		if len(hits) > 0 || time.Now().After(deadline) {
			return hits
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *sink) close() {
	if s == nil {
		return
	}
	if s.ln != nil {
		s.ln.Close()
	}
	if s.pc != nil {
		s.pc.Close()
	}
	if s.remove != "" {
		os.Remove(s.remove)
	}
}
