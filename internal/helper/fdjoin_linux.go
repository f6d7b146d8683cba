package helper

import "golang.org/x/sys/unix"

// joinFDs copies both ways between two connected stream sockets until both
// directions end, passing each side's end of stream on (a half-close), as
// netjoin.Join does for net.Conns. The sockets are blocking: each
// direction is one goroutine in splice(2), the bytes moving kernel-side
// through a pipe of its own. It does not close the sockets.
func joinFDs(a, b int) {
	done := make(chan struct{}, 2)
	go func() { spliceAll(b, a); done <- struct{}{} }()
	go func() { spliceAll(a, b); done <- struct{}{} }()
	<-done
	<-done
}

// spliceAll moves src's stream to dst until src ends or either fails,
// then shuts dst for writing.
func spliceAll(dst, src int) {
	defer unix.Shutdown(dst, unix.SHUT_WR)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	const chunk = 1 << 20
	for {
		n, err := unix.Splice(src, nil, p[1], nil, chunk, unix.SPLICE_F_MOVE)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		for n > 0 {
			m, err := unix.Splice(p[0], nil, dst, nil, int(n), unix.SPLICE_F_MOVE)
			if err == unix.EINTR {
				continue
			}
			if err != nil || m == 0 {
				return
			}
			n -= m
		}
	}
}
