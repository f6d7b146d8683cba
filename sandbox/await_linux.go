package sandbox

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// awaitExit waits up to d for p to exit, without reaping it (Wait does).
func awaitExit(p *os.Process, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, p.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				break
			}
		}
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
