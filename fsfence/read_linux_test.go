package fsfence_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cordonhq/cordon/fsfence"
)

// TestReadMagicLinks: /proc magic links hand out objects without a path
// the fence could check by name; they are refused outright.
func TestReadMagicLinks(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	secret := tr.p("home/.ssh/id_rsa")
	held, err := os.Open(secret) // a descriptor the server process happens to hold
	require.NoError(t, err)
	defer held.Close()
	fd := strconv.Itoa(int(held.Fd()))
	require.NoError(t, os.Symlink("/proc/self/root"+secret, tr.p("ws/procsecret")))
	require.NoError(t, os.Symlink("/proc/self/fd/"+fd, tr.p("ws/fdsecret")))

	for _, p := range []string{
		"/proc/self/root" + secret,
		"/proc/thread-self/root" + secret,
		"/proc/" + strconv.Itoa(os.Getpid()) + "/root" + secret,
		"/proc/self/fd/" + fd,
		"/dev/fd/" + fd,
		"/proc/self/cwd",
		"/proc/self/exe",
		tr.p("ws/procsecret"),
		tr.p("ws/fdsecret"),
		tr.p("ws/procroot/target.txt"), // magic even when the target is harmless
	} {
		t.Run(p, func(t *testing.T) {
			file, err := f.OpenFile(p)
			requireDenied(t, err, fsfence.ReasonMagicLink)
			require.Nil(t, file)
			require.ErrorIs(t, err, syscall.ELOOP)
			_, err = f.ReadDir(p)
			requireDenied(t, err, fsfence.ReasonMagicLink)
			_, err = f.Stat(p)
			requireDenied(t, err, fsfence.ReasonMagicLink)
		})
	}
}

// TestReadProcfs: per-process files hold the server's own secrets.
func TestReadProcfs(t *testing.T) {
	f, err := fsfence.New(fsfence.Config{})
	require.NoError(t, err)
	for _, p := range []string{
		"/proc/self/environ", "/proc/self/mem", "/proc/self/status", "/proc/thread-self/environ",
		"/proc/" + strconv.Itoa(os.Getpid()) + "/environ", "/proc/1/environ", "/proc/self/fd", "/proc/self",
	} {
		_, err := f.OpenFile(p)
		requireDenied(t, err, fsfence.ReasonProcfs)
		_, err = f.ReadDir(p)
		requireDenied(t, err, fsfence.ReasonProcfs)
	}
	file, err := f.OpenFile("/proc/cpuinfo")
	require.NoError(t, err, "system-wide /proc files stay readable")
	file.Close()
	_, err = f.ReadDir("/proc")
	require.NoError(t, err)
}

// TestReadSwapRace flips a name between a harmless file and a symlink to a
// secret while reading it: whatever is read was checked, so a secret never
// comes back.
func TestReadSwapRace(t *testing.T) {
	tr := newTree(t)
	f := tr.fence(t)
	name, swap := tr.p("ws/flip"), tr.p("ws/flip-swap")
	require.NoError(t, os.WriteFile(name, []byte("harmless"), 0o644))
	require.NoError(t, os.Symlink(tr.p("home/.ssh/id_rsa"), swap))

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			_ = unix.Renameat2(unix.AT_FDCWD, name, unix.AT_FDCWD, swap, unix.RENAME_EXCHANGE)
		}
	})
	var reads, denials int
	for range 2000 {
		file, err := f.OpenFile(name)
		if err != nil {
			if !errors.Is(err, syscall.EAGAIN) { // moved while checked: the caller retries
				require.ErrorIs(t, err, fsfence.ErrDenied)
			}
			denials++
			continue
		}
		data, err := io.ReadAll(file)
		file.Close()
		require.NoError(t, err)
		require.Equal(t, "harmless", string(data))
		reads++
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("reads=%d denials=%d", reads, denials)
}

// TestBindMountAlias: a read-deny or protected directory bind-mounted
// inside the workspace is the same directory by identity, whatever the
// kernel's path says. Needs a private mount namespace, so it runs in a
// re-executed child.
func TestBindMountAlias(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root")
	}
	tr := newTree(t)
	require.NoError(t, os.Mkdir(tr.p("ws/bound-ssh"), 0o755))
	require.NoError(t, os.Mkdir(tr.p("ws/bound-hooks"), 0o755))
	before := snapshot(t, tr.base)
	out := inMountNamespace(t, "bindmount", tr.base)
	assert.Equal(t, "read denied: on the read-deny list\nlist denied: on the read-deny list\nwrite denied: protected path\n", out)
	require.Equal(t, before, snapshot(t, tr.base), "nothing written through the mount")
}

func init() {
	helpers["bindmount"] = func(args []string) int {
		tr := &tree{base: args[0], ws: filepath.Join(args[0], "ws"), home: filepath.Join(args[0], "home"), outside: filepath.Join(args[0], "outside")}
		must := func(err error) {
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(3)
			}
		}
		must(unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""))
		must(unix.Mount(tr.p("home/.ssh"), tr.p("ws/bound-ssh"), "", unix.MS_BIND, ""))
		must(unix.Mount(tr.p("ws/.git/hooks"), tr.p("ws/bound-hooks"), "", unix.MS_BIND, ""))
		f, err := fsfence.New(tr.config())
		must(err)
		report := func(what string, err error) {
			var de *fsfence.DeniedError
			if errorsAs(err, &de) {
				fmt.Printf("%s denied: %s\n", what, de.Reason)
			} else {
				fmt.Printf("%s allowed: %v\n", what, err)
			}
		}
		_, err = f.OpenFile(tr.p("ws/bound-ssh/id_rsa"))
		report("read", err)
		_, err = f.ReadDir(tr.p("ws/bound-ssh"))
		report("list", err)
		_, err = f.WriteFile(tr.p("ws/bound-hooks/pre-commit"), []byte("evil"))
		report("write", err)
		return 0
	}
}
