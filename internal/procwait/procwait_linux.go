// Package procwait waits for a child's exit without reaping it and without
// holding a Go processor meanwhile, so that the caller's Wait still gets
// the status.
package procwait

import (
	"errors"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"
)

// Exit waits up to d for p to exit (d <= 0: for as long as it takes),
// without reaping it: Wait still does, and gets the status. It reports
// whether p exited in time. Call it before Wait, not after: a reaped
// process's pid may be another's.
//
// It waits on a pidfd in the runtime's poller, so the goroutine holds no
// Go processor (P) while it waits. A blocking waitid, which os.Process.Wait
// makes, keeps its P until the scheduler's monitor takes it back, up to a
// 10 ms tick later: on a 2-CPU machine the probe's two runs held both Ps
// and the client's initialize waited for one (20 ms from its arrival to
// its answer instead of 2). Where pidfds do not work (before Linux 5.3, or
// a seccomp filter refuses them) it falls back to a blocking waitid.
func Exit(p *os.Process, d time.Duration) bool {
	fd, err := unix.PidfdOpen(p.Pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return exitBlocking(p, d)
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return exitBlocking(p, d)
	}
	start := time.Now()
	if d > 0 && f.SetReadDeadline(start.Add(d)) != nil {
		return exitBlocking(p, d) // the poller does not take the pidfd
	}
	err = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		// An error (the process is reaped already) ends the wait too.
		return err != nil || info.Signo != 0
	})
	switch {
	case err == nil:
		return true
	case errors.Is(err, os.ErrDeadlineExceeded):
		return false
	case d <= 0:
		return exitBlocking(p, 0)
	}
	// The poller could not wait on the pidfd: wait as before, for what is
	// left of d. Never report an exit that has not been seen.
	left := d - time.Since(start)
	return left > 0 && exitBlocking(p, left)
}

func exitBlocking(p *os.Process, d time.Duration) bool {
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
	if d <= 0 {
		<-done
		return true
	}
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// Run is exec.Cmd.Run, waiting for the exit in the poller (Exit): a
// helper git or bwrap run holds no P meanwhile.
func Run(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	Exit(cmd.Process, 0)
	return cmd.Wait()
}
