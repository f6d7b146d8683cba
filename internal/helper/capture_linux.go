package helper

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Transparent capture, under bwrap: a program that ignores the proxy
// variables still resolves names and connects to ports 80 and 443. The
// bridge answers its DNS queries itself (TCP on 127.0.0.1:53; the
// sandbox's resolv.conf says so, with use-vc, since the filter allows no
// UDP) with a fake address in 127.64.0.0/10 for each name, and listens on
// :80 and :443 of every loopback address: a connection to a fake address
// is tunnelled to the egress proxy as CONNECT name:port, so the same
// lists, and the same human question, decide it. Nothing is resolved
// inside: the proxy resolves the name after its decision.
//
// bwrap's network namespace belongs to its outer user namespace, and
// --disable-userns puts the helper in a nested one, where binding a port
// below 1024 there is refused whatever the capabilities. So the helper
// makes a network namespace of its own (isolateNet), owned by the
// namespace it is in, before anything listens; the command inherits it.
// The proxy is a unix socket on the file system, reachable from any
// network namespace.

// The capture listeners follow the proxy's on the bridge's descriptors.
const (
	captureDNSFD   = 4
	captureHTTPFD  = 5
	captureHTTPSFD = 6
)

// CaptureArg, after BridgeArg and the socket, says the capture
// listeners were passed.
const CaptureArg = "--capture"

// isolateNet gives the calling thread (the helper's, which execs the
// command and starts the bridge) a new network namespace with loopback up.
// On failure the thread keeps the one it had.
func isolateNet() error {
	old, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(old)
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return err
	}
	if err := loopbackUp(); err != nil {
		if serr := unix.Setns(old, unix.CLONE_NEWNET); serr != nil {
			// Neither namespace works: the bridge's listen fails next,
			// and the command does not run.
			return fmt.Errorf("%v; returning to the sandbox's namespace: %v", err, serr)
		}
		return err
	}
	return nil
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// listenCapture makes the capture listeners.
func listenCapture() ([]int, error) {
	var fds []int
	for _, l := range []struct {
		addr [4]byte
		port int
	}{{[4]byte{127, 0, 0, 1}, 53}, {[4]byte{}, 80}, {[4]byte{}, 443}} {
		fd, err := listenTCP4(l.addr, l.port)
		if err != nil {
			for _, f := range fds {
				unix.Close(f)
			}
			return nil, fmt.Errorf("capture: listening on port %d: %w", l.port, err)
		}
		fds = append(fds, fd)
	}
	return fds, nil
}

// fakeNames maps the fake addresses the stub DNS gave out to their names.
type fakeNames struct {
	mu     sync.Mutex
	byName map[string][4]byte
	byAddr map[[4]byte]string
	next   uint32
}

// fakeBase is 127.64.0.0: loopback, so that a connection to a fake
// address reaches the listeners, and apart from 127.0.0.1.
const fakeBase = 127<<24 | 64<<16

func (f *fakeNames) addr(name string) ([4]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.byName[name]; ok {
		return a, true
	}
	if f.next >= 1<<22-2 {
		return [4]byte{}, false
	}
	f.next++
	var a [4]byte
	binary.BigEndian.PutUint32(a[:], fakeBase+f.next)
	f.byName[name], f.byAddr[a] = a, name
	return a, true
}

func (f *fakeNames) name(a [4]byte) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byAddr[a]
}

// serveCapture serves the capture listeners in the background.
func serveCapture(socket string) {
	names := &fakeNames{byName: map[string][4]byte{}, byAddr: map[[4]byte]string{}}
	for _, fd := range []int{captureDNSFD, captureHTTPFD, captureHTTPSFD} {
		unix.CloseOnExec(fd)
	}
	go acceptLoop(captureDNSFD, func(c int) { serveDNS(c, names) })
	go acceptLoop(captureHTTPFD, func(c int) { tunnel(c, socket, names, 80) })
	go acceptLoop(captureHTTPSFD, func(c int) { tunnel(c, socket, names, 443) })
}

func acceptLoop(ln int, serve func(int)) {
	for {
		c, _, err := unix.Accept4(ln, unix.SOCK_CLOEXEC)
		switch err {
		case nil:
			go serve(c)
		case unix.EINTR, unix.ECONNABORTED, unix.EMFILE, unix.ENFILE, unix.ENOBUFS, unix.ENOMEM:
			continue
		default:
			return
		}
	}
}

// tunnel carries a captured connection to the proxy as CONNECT
// name:port. A connection to an address the stub did not give out is
// closed: it names no host.
func tunnel(c int, socket string, names *fakeNames, port int) {
	sa, err := unix.Getsockname(c)
	in4, ok := sa.(*unix.SockaddrInet4)
	if err != nil || !ok {
		unix.Close(c)
		return
	}
	name := names.name(in4.Addr)
	if name == "" {
		unix.Close(c)
		return
	}
	u, err := dialUnix(socket)
	if err != nil {
		unix.Close(c)
		return
	}
	target := fmt.Sprintf("%s:%d", name, port)
	if !writeAll(u, []byte("CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")) {
		unix.Close(c)
		unix.Close(u)
		return
	}
	head, ok := readHead(u)
	if ok && bytes.HasPrefix(head, []byte("HTTP/1.1 200")) {
		joinFDs(c, u)
		return
	}
	if ok && port == 80 {
		// Plain HTTP: the program reads the proxy's refusal (a 403
		// naming the host and the config line) as its answer, once it
		// has asked: an answer before the request, with the connection
		// closed after it, is one an HTTP client may not take (Go's
		// transport: "readLoopPeekFailLocked").
		unix.SetsockoptTimeval(c, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 10})
		readHead(c)
		writeAll(c, head)
		joinFDs(c, u)
		return
	}
	unix.Close(c)
	unix.Close(u)
}

// readHead reads the proxy's answer up to its blank line, a byte at a
// time so that nothing after it is taken from the stream.
func readHead(fd int) ([]byte, bool) {
	var head []byte
	b := make([]byte, 1)
	for len(head) < 16<<10 {
		n, err := unix.Read(fd, b)
		if err == unix.EINTR {
			continue
		}
		if n != 1 || err != nil {
			return nil, false
		}
		head = append(head, b[0])
		if bytes.HasSuffix(head, []byte("\r\n\r\n")) {
			return head, true
		}
	}
	return nil, false
}

func writeAll(fd int, b []byte) bool {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return false
		}
		b = b[n:]
	}
	return true
}

func readFull(fd int, b []byte) bool {
	for len(b) > 0 {
		n, err := unix.Read(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return false
		}
		b = b[n:]
	}
	return true
}

// serveDNS answers DNS over TCP on one connection: each A question with
// the name's fake address, any other question with no answer (so that
// clients fall back to IPv4, the only family the sandbox has).
func serveDNS(c int, names *fakeNames) {
	defer unix.Close(c)
	for {
		var l [2]byte
		if !readFull(c, l[:]) {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint16(l[:]))
		if !readFull(c, msg) {
			return
		}
		resp := dnsAnswer(msg, names)
		if resp == nil {
			return
		}
		out := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
		if !writeAll(c, append(out, resp...)) {
			return
		}
	}
}

// dnsAnswer is the reply to one query; nil when it is not one.
func dnsAnswer(q []byte, names *fakeNames) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:6]) != 1 || q[2]&0x80 != 0 {
		return nil
	}
	i := 12
	var labels []string
	for {
		if i >= len(q) {
			return nil
		}
		n := int(q[i])
		i++
		if n == 0 {
			break
		}
		if n > 63 || i+n > len(q) {
			return nil // compressed or bad: not in a question
		}
		labels = append(labels, strings.ToLower(string(q[i:i+n])))
		i += n
	}
	if i+4 > len(q) {
		return nil
	}
	qtype, qclass := binary.BigEndian.Uint16(q[i:]), binary.BigEndian.Uint16(q[i+2:])
	question := q[12 : i+4]
	name := strings.Join(labels, ".")
	resp := make([]byte, 12, 12+len(question)+16)
	copy(resp, q[:2])          // the id
	resp[2] = 0x80 | q[2]&0x01 // a response; recursion desired as asked
	resp[3] = 0x80             // recursion available, no error
	binary.BigEndian.PutUint16(resp[4:], 1)
	resp = append(resp, question...)
	if qtype != 1 || qclass != 1 || name == "" || !validName(name) {
		return resp // no answer
	}
	a, ok := names.addr(name)
	if !ok {
		resp[3] |= 2 // SERVFAIL: out of fake addresses
		return resp
	}
	binary.BigEndian.PutUint16(resp[6:], 1)
	resp = append(resp, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
	return append(resp, a[:]...)
}

// validName keeps what the proxy could take as a host: letters, digits,
// '-', '_' and dots.
func validName(name string) bool {
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return false
		}
	}
	return len(name) <= 253
}
