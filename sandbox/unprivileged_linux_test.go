package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUnprivileged re-runs the backend suite as nobody. Root bypasses
// ordinary file permissions, and bwrap and Landlock take other paths for
// an unprivileged user (a real user namespace, no capabilities to drop),
// so both must be proved.
func TestUnprivileged(t *testing.T) {
	if os.Getuid() != 0 {
		t.Log("already unprivileged: the backend tests in this run cover it")
		return
	}
	setpriv, err := exec.LookPath("setpriv")
	require.NoError(t, err, "setpriv (util-linux) is needed to run the tests as an unprivileged user")
	bin := sysprobePath(t) // the test binary, where nobody can run it
	home := filepath.Join(testBase(t), "nobody-home")
	require.NoError(t, os.MkdirAll(home, 0o777))
	require.NoError(t, os.Chmod(home, 0o777))
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
		bin, "-test.v", "-test.count=1", "-test.run", "^(TestBackend|TestBwrap|TestProtected|TestNoStubs|TestSymlinked|TestConcurrentStubs|TestFileOnTheWay|TestFileInPlace|TestAKernelConfig|TestFlood|TestReaperOutlivesSignalsSentToIt|TestCommandKeepsItsGOMAXPROCS|TestNeverRanIsTyped)",
		// The argv goldens are root's (a user who is not root gets the
		// capture's capabilities too), and lie in testdata, away from here.
		"-test.skip", "^TestBwrapArgvGolden$")
	cmd.Env = append(Environ(os.Environ(), nil), "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	cmd.Dir = home
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the backend tests failed as uid 65534:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestBackendReadOnly/bwrap")
	require.Contains(t, string(out), "--- PASS: TestBackendReadOnly/landlock")
	require.Contains(t, string(out), "--- PASS: TestFileInPlaceOfADirectoryOnTheWay/landlock", "the guard's tests run as nobody too")
	require.Contains(t, string(out), "--- PASS: TestReaperOutlivesSignalsSentToIt/landlock", "the reaper's signal handling runs as nobody too")
	require.NotContains(t, string(out), "--- SKIP")
}
