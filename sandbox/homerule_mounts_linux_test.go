package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cordonhq/cordon/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMountPointsIn(t *testing.T) {
	info := `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 8:1 /home/me /ws/my\040home rw,relatime shared:1 - ext4 /dev/sda1 rw
41 22 0:5 / /ws rw - tmpfs tmpfs rw
42 22 0:6 / /ws-other rw - tmpfs tmpfs rw
`
	assert.Equal(t, []string{"/ws/my home"}, mountPointsIn(info, []string{"/ws"}))
	assert.Empty(t, mountPointsIn(info, []string{"/elsewhere"}))
}

// TestHomeBindMountedInsideAWritableRoot: the home, bind-mounted into the
// workspace (in a mount namespace of the test's own, so the machine's
// mount table is untouched), is refused like a workspace that is the
// home, and a command writes nothing through it; a symlink to the home
// in the workspace needs no refusal (the write is refused as one outside
// the roots). The host judges.
func TestHomeBindMountedInsideAWritableRoot(t *testing.T) {
	if os.Getenv("CORDON_TEST_MOUNT_NS") == "" {
		unshare, err := exec.LookPath("unshare")
		if err != nil || os.Geteuid() != 0 {
			testenv.SkipUnlessCI(t, "needs root and unshare for a private mount namespace")
		}
		cmd := exec.Command(unshare, "--mount", "--propagation", "private", os.Args[0],
			"-test.run", "^TestHomeBindMountedInsideAWritableRoot$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "CORDON_TEST_MOUNT_NS=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestHomeBindMountedInsideAWritableRoot", "%s", out)
		return
	}
	eachBackend(t, func(t *testing.T, prov Backend) {
		f := newFixture(t, prov)
		rc := filepath.Join(f.home, ".bashrc")
		require.NoError(t, os.WriteFile(rc, []byte("# mine\n"), 0o644))
		mnt := filepath.Join(f.ws, "my home")
		require.NoError(t, os.Mkdir(mnt, 0o755))
		require.NoError(t, syscall.Mount(f.home, mnt, "", syscall.MS_BIND, ""))
		t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
		require.NoError(t, os.Symlink(f.home, filepath.Join(f.ws, "homelink")))

		p := f.policy(WorkspaceWrite, NetworkAllow)
		ex := &Executor{Backends: &Backends{Forced: prov.Name()}, Requirement: Required}
		var out bytes.Buffer
		_, err := ex.Run(context.Background(), p, RunSpec{
			Argv: []string{"/bin/sh", "-c", `echo pwned >> "my home/.bashrc"`}, Dir: p.WorkspaceRoot, Stdout: &out, Stderr: &out})
		var ue *UnavailableError
		require.ErrorAs(t, err, &ue, "output: %s", out.String())
		assert.Contains(t, ue.Reason, mnt)
		require.NoError(t, syscall.Unmount(mnt, syscall.MNT_DETACH))

		p = f.policy(WorkspaceWrite, NetworkAllow)
		require.NoError(t, p.Refusal(), "a symlink to the home is no mount")
		outs, _ := f.sh(p, `echo pwned >> homelink/.bashrc`)
		b, err := os.ReadFile(rc)
		require.NoError(t, err)
		assert.Equal(t, "# mine\n", string(b), "the home was written through the workspace: %s", outs)
	})
}
