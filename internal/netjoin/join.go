// Package netjoin joins two connections, as the egress proxy and the
// bridge in front of it both do. It imports only the standard library, so
// the confinement helper stays small.
package netjoin

import (
	"io"
	"net"
)

// Join copies both ways until both directions end, passing each side's
// end of stream on (a half-close), so that a client that reads to EOF is
// not left waiting. It does not close the connections.
func Join(a, b net.Conn) {
	done := make(chan struct{}, 2)
	half := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go half(a, b)
	go half(b, a)
	<-done
	<-done
}
