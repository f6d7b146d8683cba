//go:build linux

package escape_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Secrets planted around the world. None of them may appear in what a
// confined command prints (unless the table documents the leak), and no
// attacker script spells them out.
const (
	canarySSH     = "SSH-KEY-CANARY-7f3a"
	canaryAWSFile = "AWS-FILE-CANARY-91c2"
	canaryNetrc   = "NETRC-CANARY-5d0e"
	canaryHeld    = "HELD-FD-CANARY-c4b8"
	canaryState   = "STATE-DIR-CANARY-2a6f"
	canaryEnvAWS  = "aws-env-canary-8e1d"
	canaryEnvGH   = "gh-env-canary-03b7"
)

var staticCanaries = []string{canarySSH, canaryAWSFile, canaryNetrc, canaryHeld, canaryState, canaryEnvAWS, canaryEnvGH}

// world is one user's machine in miniature, under /var/tmp so that it
// stays visible inside bwrap:
//
//	ws/       the project workspace
//	outside/  the user's other files
//	home/     a fake HOME: credentials, shell start-up files, cordon's
//	          config (~/.config/cordon) and state (~/.local/state/cordon)
//	held/     files cordon inherits open descriptors on, and its cwd
//	run/      a fake $XDG_RUNTIME_DIR with a session-bus socket
//	sock/     a unix socket outside every boundary
//
// ws, outside and home are restored before every run; held, run and sock
// are fixed (their listeners and descriptors live as long as the world).
type world struct {
	base, ws, outside, home, state, config, held, run, sock string

	heldFiles []*os.File // become fds 3, 4, 5 of every cordon process
	pty       *pty       // fd 6 and the controlling terminal of every cordon process

	bus, runDocker, outsideSock, tcp, udp, abstract *sink
	abstractName                                    string
	victim                                          *victim
	tokens                                          []string // secrets that appear at run time (the HTTP token)
}

func newWorld(t testing.TB, name string) *world {
	t.Helper()
	base := filepath.Join(root, name)
	w := &world{base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"),
		home: filepath.Join(base, "home"), held: filepath.Join(base, "held"), run: filepath.Join(base, "run"),
		sock: filepath.Join(base, "sock")}
	w.state = filepath.Join(w.home, ".local", "state", "cordon")
	w.config = filepath.Join(w.home, ".config", "cordon")
	for _, d := range []string{w.ws, w.outside, w.home, w.held, w.sock, w.state, filepath.Join(base, "cache")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	os.Chmod(base, 0o755)
	must(t, os.Mkdir(w.run, 0o700))
	w.resetHeld()
	for _, spec := range []struct {
		name string
		flag int
	}{{"rw.txt", os.O_RDWR}, {"secret.txt", os.O_RDONLY}, {".", os.O_RDONLY}} {
		f, err := os.OpenFile(filepath.Join(w.held, spec.name), spec.flag, 0)
		must(t, err)
		w.heldFiles = append(w.heldFiles, f)
	}
	var err error
	w.pty, err = openPty()
	must(t, err)
	w.bus, err = listenSink("unix", filepath.Join(w.run, "bus"))
	must(t, err)
	w.runDocker, err = listenSink("unix", filepath.Join(w.run, "docker.sock"))
	must(t, err)
	w.outsideSock, err = listenSink("unix", filepath.Join(w.sock, "agent.sock"))
	must(t, err)
	w.tcp, err = listenSink("tcp4", "127.0.0.1:0")
	must(t, err)
	w.udp, err = listenSink("udp", "127.0.0.1:0")
	must(t, err)
	w.abstractName = fmt.Sprintf("cordon-escape-bus-%s-%d", name, os.Getpid())
	w.abstract, err = listenSink("unix", "@"+w.abstractName)
	must(t, err)
	w.victim = startVictim(t)
	t.Cleanup(w.close)
	w.reset(t)
	return w
}

func (w *world) close() {
	for _, s := range []*sink{w.bus, w.runDocker, w.outsideSock, w.tcp, w.udp, w.abstract} {
		s.close()
	}
	for _, f := range w.heldFiles {
		f.Close()
	}
	w.pty.close()
	w.victim.stop()
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// env is cordon's environment: the fake home, the fake runtime dir, and
// secrets that must never reach a confined command.
func (w *world) env() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + w.home, "USER=root", "LOGNAME=root", "LANG=C.UTF-8", "TERM=dumb",
		"XDG_CONFIG_HOME=", "XDG_STATE_HOME=", "XDG_CACHE_HOME=" + filepath.Join(w.base, "cache"),
		"XDG_RUNTIME_DIR=" + w.run,
		"AWS_SECRET_ACCESS_KEY=" + canaryEnvAWS, "GITHUB_TOKEN=" + canaryEnvGH,
		"DOCKER_HOST=unix://" + filepath.Join(w.sock, "agent.sock"),
	}
}

func (w *world) canaries() []string { return append(slices.Clone(staticCanaries), w.tokens...) }

func (w *world) resetHeld() {
	os.WriteFile(filepath.Join(w.held, "rw.txt"), []byte("held rw\n"), 0o644)
	os.WriteFile(filepath.Join(w.held, "secret.txt"), []byte(canaryHeld+"\n"), 0o600)
	os.WriteFile(filepath.Join(w.held, "cwd-target.txt"), []byte("cordon's cwd\n"), 0o644)
}

// baseline files, restored before every run.
var baseline = []struct {
	path, content string
	mode          os.FileMode
}{
	{"ws/mine.txt", "mine\n", 0o644},
	{"ws/src/main.go", "package main\n", 0o644},
	{"ws/.bashrc", "# project bashrc\n", 0o644},
	{"ws/.vscode/settings.json", "{}\n", 0o644},
	{"outside/file.txt", "outside\n", 0o644},
	{"outside/dir/inner.txt", "inner\n", 0o644},
	{"home/.ssh/id_canary", canarySSH + "\n", 0o600},
	{"home/.ssh/authorized_keys", "ssh-ed25519 AAAA-legit user@host\n", 0o600},
	{"home/.aws/credentials", "[default]\naws_secret_access_key = " + canaryAWSFile + "\n", 0o600},
	{"home/.netrc", "machine example.com password " + canaryNetrc + "\n", 0o600},
	{"home/.bashrc", "# user bashrc\n", 0o644},
	{"home/.profile", "# user profile\n", 0o644},
	{"home/.gitconfig", "[user]\n\tname = Human\n", 0o644},
	{"home/.config/cordon/config.toml", "mode = \"workspace-write\"\nnetwork = \"allow\"\n", 0o644},
	{"home/projects/notes.txt", "notes\n", 0o644},
}

// reset restores ws, outside and home (but not cordon's live state dir)
// to the baseline, and the held files in place.
func (w *world) reset(t testing.TB) {
	t.Helper()
	for _, d := range []string{w.ws, w.outside} {
		clearDir(t, d, nil)
	}
	clearDir(t, w.home, map[string]bool{".local": true})
	clearDir(t, filepath.Join(w.home, ".local"), map[string]bool{"state": true})
	clearDir(t, filepath.Join(w.home, ".local", "state"), map[string]bool{"cordon": true})
	must(t, os.MkdirAll(w.state, 0o755))
	for _, b := range baseline {
		p := filepath.Join(w.base, b.path)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(b.content), b.mode))
	}
	for _, d := range []string{".ssh", ".aws"} {
		os.Chmod(filepath.Join(w.home, d), 0o700)
	}
	must(t, os.WriteFile(filepath.Join(w.state, "canary.txt"), []byte(canaryState+"\n"), 0o600))
	w.resetHeld()
	w.pty.drain()
}

// clearDir removes every entry of dir except those named in keep.
func clearDir(t testing.TB, dir string, keep map[string]bool) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		must(t, os.MkdirAll(dir, 0o755))
		return
	}
	must(t, err)
	for _, e := range entries {
		if keep[e.Name()] {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.RemoveAll(p); err != nil {
			os.Chmod(p, 0o755)
			filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					os.Chmod(q, 0o755)
				}
				return nil
			})
			must(t, os.RemoveAll(p))
		}
	}
}

// gitInit makes dir a real git repository (from the host, as the human).
func gitInit(t testing.TB, dir string) {
	t.Helper()
	out, err := exec.Command("git", "init", "-q", dir).CombinedOutput()
	must(t, errorsJoin(err, out))
}

func errorsJoin(err error, out []byte) error {
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// protectedNames are the paths, relative to a writable root, that stay
// read-only in workspace-write (SPEC §1), homeStartupNames the start-up
// locations protected when a writable root contains HOME, and
// readDenyNames the credential locations relative to HOME (uncreatable
// there too).
var protectedNames = []string{".git/hooks", ".git/config", ".git/commondir", ".git/config.worktree", ".gitmodules",
	".cordon", ".bashrc", ".bash_aliases", ".bashrc.d", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".gitconfig", ".config/git", ".config/systemd",
	".vscode", ".idea", ".mcp.json", ".claude", ".cursor", ".codex", ".gemini", ".envrc", ".ripgreprc",
	".devcontainer", ".pre-commit-config.yaml", "cordon.toml"}

var homeStartupNames = []string{".config/autostart", ".config/environment.d", ".pam_environment", ".xprofile",
	".config/fish", ".vimrc", ".config/nvim", ".local/bin", "bin", ".cargo/bin", ".claude.json"}

var readDenyNames = []string{".ssh", ".aws", ".gnupg", ".kube", ".docker", ".config/gh", ".config/gcloud",
	".gcp", ".azure", ".netrc", ".git-credentials", ".npmrc", ".pypirc"}

// guarded are the trees that no confined command may change in this mode:
// everything outside the writable workspace, plus the protected paths
// inside it (those of the nested repositories and submodules too).
// cordon's own churn in its state dir (session logs, session tmp, stub
// journal) is left out; the planted state canary is in.
func (r *run) guarded() []string {
	w := r.w
	paths := []string{w.outside, w.held, w.run, w.sock,
		filepath.Join(w.state, "canary.txt"), filepath.Join(w.state, "http-token")}
	add := func(rootDir string, names []string) {
		for _, n := range names {
			paths = append(paths, filepath.Join(rootDir, n))
		}
	}
	switch {
	case r.mode == "read-only":
		paths = append(paths, w.ws)
		paths = append(paths, w.home)
	case r.c.Home: // the workspace is HOME
		paths = append(paths, w.ws)
		add(w.home, protectedNames)
		add(w.home, homeStartupNames)
		add(w.home, readDenyNames)
		paths = append(paths, w.config, w.state)
		paths = append(paths, r.gitGuarded(w.home)...)
	default:
		paths = append(paths, w.home)
		add(w.ws, protectedNames)
		paths = append(paths, r.gitGuarded(w.ws)...)
	}
	if r.c.Guard != nil {
		paths = append(paths, r.c.Guard(r)...)
	}
	return paths
}

// gitGuarded are the git files beneath root that name programs git runs:
// each submodule's gitdir config and hooks (.git/modules/*, which the
// command may also create), each linked worktree's config.worktree, and
// the hooks, config, commondir and config.worktree of every repository
// nested up to 3 levels deep, or its .git file (a gitdir pointer). The
// nested repositories are those found before the command ran (the first
// call), so that one the command makes itself is not counted.
func (r *run) gitGuarded(root string) []string {
	var paths []string
	for _, pat := range []string{".git/modules/*/hooks", ".git/modules/*/config", ".git/worktrees/*/config.worktree"} {
		m, _ := filepath.Glob(filepath.Join(root, pat))
		paths = append(paths, m...)
	}
	if r.nested == nil {
		r.nested = []string{}
		for _, pat := range []string{"*/.git", "*/*/.git", "*/*/*/.git"} {
			m, _ := filepath.Glob(filepath.Join(root, pat))
			r.nested = append(r.nested, m...)
		}
	}
	for _, dotgit := range r.nested {
		if fi, err := os.Lstat(dotgit); err != nil || !fi.IsDir() {
			paths = append(paths, dotgit)
			continue
		}
		for _, n := range []string{"hooks", "config", "commondir", "config.worktree"} {
			paths = append(paths, filepath.Join(dotgit, n))
		}
	}
	return paths
}

// churn is cordon's own bookkeeping, which changes with every call, and
// the start-up probe's scratch directory (probe/), made and removed by each
// cordon that starts. The guard's store is made by the first guarded call
// and kept: what is in it (nothing, between calls) is still compared.
func (w *world) churn(p string) bool {
	if p == filepath.Join(w.state, "guard") {
		return true
	}
	for _, d := range []string{"sessions", "tmp", "stubs", "probe"} {
		if p == filepath.Join(w.state, d) || strings.HasPrefix(p, filepath.Join(w.state, d)+"/") {
			return true
		}
	}
	return false
}

// snapshot records every entry beneath the given paths without following
// symlinks: type, mode, owner, size, mtime, content hash, link target,
// link count and user xattrs, so that a test can prove nothing changed.
func (w *world) snapshot(paths ...string) map[string]string {
	snap := map[string]string{}
	for _, top := range paths {
		if _, err := os.Lstat(top); err != nil {
			snap[top] = "<absent>"
			continue
		}
		filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if w.churn(p) {
				if d != nil && d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if err != nil {
				snap[p] = "error: " + err.Error()
				return nil
			}
			snap[p] = describe(p)
			return nil
		})
	}
	return snap
}

func describe(p string) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return "<absent>"
	}
	st := fi.Sys().(*syscall.Stat_t)
	desc := fmt.Sprintf("%v uid=%d gid=%d", fi.Mode(), st.Uid, st.Gid)
	if !fi.IsDir() {
		// A directory's size and link count change with cordon's own
		// bookkeeping; its entries are recorded one by one anyway.
		desc += fmt.Sprintf(" size=%d nlink=%d mtime=%d", fi.Size(), st.Nlink, fi.ModTime().UnixNano())
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(p)
		desc += " -> " + target
	case fi.Mode().IsRegular() && fi.Size() < 1<<20:
		data, _ := os.ReadFile(p)
		desc += fmt.Sprintf(" sha=%x", sha256.Sum256(data))
	case fi.Mode()&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		desc += fmt.Sprintf(" rdev=%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		buf := make([]byte, 4096)
		if n, err := unix.Llistxattr(p, buf); err == nil && n > 0 {
			names := strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00")
			sort.Strings(names)
			desc += " xattrs=" + strings.Join(names, ",")
		}
	}
	return desc
}

// diff lists what changed between two snapshots.
func diff(before, after map[string]string) []string {
	var out []string
	for p, b := range before {
		a, ok := after[p]
		switch {
		case !ok:
			out = append(out, "removed "+p)
		case a != b:
			out = append(out, fmt.Sprintf("changed %s: %s => %s", p, b, a))
		}
	}
	for p, a := range after {
		if _, ok := before[p]; !ok {
			out = append(out, fmt.Sprintf("created %s: %s", p, a))
		}
	}
	sort.Strings(out)
	return out
}

// pty is a terminal pair. The slave is the controlling terminal of every
// cordon process of the world (and its fd 6): TIOCSTI into it, or writes
// through a device node naming it, show up here.
type pty struct {
	master, slave *os.File
	num           int
}

func openPty() (*pty, error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, err
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return nil, err
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, err
	}
	// Raw mode: every injected byte is readable at once.
	tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
	if err == nil {
		tio.Lflag &^= unix.ICANON | unix.ECHO | unix.ISIG
		tio.Oflag &^= unix.OPOST
		tio.Cc[unix.VMIN], tio.Cc[unix.VTIME] = 0, 0
		unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio)
	}
	return &pty{master: m, slave: s, num: n}, nil
}

func readNonblock(f *os.File) string {
	fd := int(f.Fd())
	unix.SetNonblock(fd, true)
	defer unix.SetNonblock(fd, false)
	var out bytes.Buffer
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(fd, buf)
		if n <= 0 || err != nil {
			break
		}
		out.Write(buf[:n])
	}
	return out.String()
}

// injected is what reached the terminal's input (TIOCSTI), written is what
// was written to the terminal (through a device node).
func (p *pty) injected() string { return readNonblock(p.slave) }
func (p *pty) written() string  { return readNonblock(p.master) }
func (p *pty) drain()           { p.injected(); p.written() }

func (p *pty) close() {
	if p != nil {
		p.master.Close()
		p.slave.Close()
	}
}

// victim is a host process no confined command may signal.
type victim struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startVictim(t testing.TB) *victim {
	cmd := exec.Command("sleep", "3600")
	must(t, cmd.Start())
	v := &victim{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(v.done) }()
	return v
}

func (v *victim) dead() bool {
	select {
	case <-v.done:
		return true
	default:
		return false
	}
}

func (v *victim) stop() {
	if v != nil && !v.dead() {
		v.cmd.Process.Kill()
		<-v.done
	}
}

// processesWith lists host processes whose command line holds token.
func processesWith(token string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if bytes.Contains(cmdline, []byte(token)) && !bytes.Contains(stat, []byte(") Z ")) {
			pids = append(pids, pid)
		}
	}
	return pids
}
