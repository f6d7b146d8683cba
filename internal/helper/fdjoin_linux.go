package helper

import (
	"os"

	"golang.org/x/sys/unix"
)

// joinFDs copies both ways between two connected stream sockets until both
// directions end, passing each side's end of stream on (a half-close), as
// netjoin.Join does for net.Conns, then closes both. The sockets are made
// non-blocking and wait in Go's poller, so that an idle connection holds
// no thread; the bytes move kernel-side, by splice(2) through a pipe per
// direction.
func joinFDs(a, b int) {
	fa, fb := pollable(a, "a"), pollable(b, "b")
	defer fa.Close()
	defer fb.Close()
	done := make(chan struct{}, 2)
	go func() { spliceAll(fb, fa); done <- struct{}{} }()
	go func() { spliceAll(fa, fb); done <- struct{}{} }()
	<-done
	<-done
}

func pollable(fd int, name string) *os.File {
	unix.SetNonblock(fd, true)
	return os.NewFile(uintptr(fd), name) // a non-blocking fd joins the poller
}

// spliceChunk is what one splice asks to move; the pipe is made as large,
// as Go's own splice does, so that a chunk takes two system calls.
const spliceChunk = 1 << 20

// spliceAll moves src's stream to dst until src ends or either fails,
// then shuts dst for writing.
func spliceAll(dst, src *os.File) {
	rc, err := src.SyscallConn()
	if err != nil {
		return
	}
	wc, err := dst.SyscallConn()
	if err != nil {
		return
	}
	defer wc.Control(func(fd uintptr) { unix.Shutdown(int(fd), unix.SHUT_WR) })
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	unix.FcntlInt(uintptr(p[0]), unix.F_SETPIPE_SZ, spliceChunk)
	const flags = unix.SPLICE_F_MOVE | unix.SPLICE_F_NONBLOCK
	for {
		// The pipe is empty here: EAGAIN means src has nothing yet.
		n, err := spliceWhenReady(rc.Read, func(fd int) (int64, error) {
			n, err := unix.Splice(fd, nil, p[1], nil, spliceChunk, flags)
			return int64(n), err
		})
		if err != nil || n == 0 {
			return
		}
		for n > 0 {
			// The pipe holds n bytes: EAGAIN means dst is full.
			m, err := spliceWhenReady(wc.Write, func(fd int) (int64, error) {
				m, err := unix.Splice(p[0], nil, fd, nil, int(n), flags)
				return int64(m), err
			})
			if err != nil || m == 0 {
				return
			}
			n -= m
		}
	}
}

// spliceWhenReady runs move on the socket once the poller says it is
// ready (wait is the socket's RawConn Read or Write), again after each
// EAGAIN, at once after EINTR.
func spliceWhenReady(wait func(func(uintptr) bool) error, move func(fd int) (int64, error)) (int64, error) {
	var n int64
	var moveErr error
	err := wait(func(fd uintptr) bool {
		for {
			n, moveErr = move(int(fd))
			if moveErr != unix.EINTR {
				return moveErr != unix.EAGAIN
			}
		}
	})
	if err != nil {
		return 0, err
	}
	return n, moveErr
}
