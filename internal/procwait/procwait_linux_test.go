package procwait

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Exit, through a pidfd or the blocking fallback, waits for the exit
// and leaves the status to Wait.
func TestAwaitExitLeavesTheStatusToWait(t *testing.T) {
	for name, await := range map[string]func(*os.Process, time.Duration) bool{
		"pidfd":    Exit,
		"blocking": exitBlocking,
	} {
		t.Run(name, func(t *testing.T) {
			slow := exec.Command("sleep", "5")
			require.NoError(t, slow.Start())
			assert.False(t, await(slow.Process, 20*time.Millisecond), "a 5 s sleep has not exited after 20 ms")
			require.NoError(t, slow.Process.Kill())
			assert.True(t, await(slow.Process, 0))
			assert.Error(t, slow.Wait(), "Wait still reaps it, killed")

			cmd := exec.Command("sh", "-c", "exit 3")
			require.NoError(t, cmd.Start())
			assert.True(t, await(cmd.Process, 0))
			err := cmd.Wait()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit)
			assert.Equal(t, 3, exit.ExitCode(), "the status is still there for Wait")
		})
	}
}
