//go:build linux

package peer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// sock is what the kernel's tables say of the client's socket: its inode
// (0 once its owner has closed it: an orphan, or TIME_WAIT) and the uid
// that created it.
type sock struct{ ino, uid uint32 }

// clientSocket finds the client's end of the connection (local address
// client, remote address server) in this network namespace's TCP tables.
// found is false when it is not there: the client is on another host or in
// another network namespace.
//
// It asks sock_diag for exactly that socket, which is one lookup in the
// kernel's hash table whatever the number of connections. /proc/net/tcp
// and tcp6 are read only when sock_diag cannot answer: they list every
// socket, take time proportional to that, and, read in pieces while
// sockets come and go, can skip an entry.
func clientSocket(server, client netip.AddrPort) (sk sock, found bool, err error) {
	sk, found, err = sockDiag(server, client)
	if err == nil && found {
		return sk, true, nil
	}
	// ENOENT is also what a kernel without tcp_diag answers.
	if err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EPROTONOSUPPORT) &&
		!errors.Is(err, unix.EAFNOSUPPORT) && !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EINVAL) {
		return sock{}, false, err
	}
	return procNet(server, client)
}

// sockDiag is one SOCK_DIAG_BY_FAMILY request for one TCP socket.
func sockDiag(server, client netip.AddrPort) (sock, bool, error) {
	family, src, dst := diagAddrs(client.Addr(), server.Addr())
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return sock{}, false, fmt.Errorf("sock_diag: %w", err)
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(int64(2 * time.Second))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)

	// struct nlmsghdr, then struct inet_diag_req_v2.
	req := make([]byte, 16+56)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(req[8:], 1) // seq
	r := req[16:]
	r[0], r[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(r[4:], ^uint32(0)) // every state
	id := r[8:]                     // struct inet_diag_sockid
	putSockID(id, client.Port(), server.Port(), src, dst)
	ne.PutUint32(id[36:], zoneIndex(client.Addr().Zone())) // a link-local socket is bound to its interface
	ne.PutUint32(id[40:], ^uint32(0))                      // INET_DIAG_NOCOOKIE
	ne.PutUint32(id[44:], ^uint32(0))
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return sock{}, false, fmt.Errorf("sock_diag: %w", err)
	}
	resp := make([]byte, 8192)
	n, _, err := unix.Recvfrom(fd, resp, 0)
	if err != nil {
		return sock{}, false, fmt.Errorf("sock_diag: %w", err)
	}
	resp = resp[:n]
	if len(resp) < 16 {
		return sock{}, false, errors.New("sock_diag: short answer")
	}
	switch ne.Uint16(resp[4:]) {
	case unix.NLMSG_ERROR:
		if len(resp) < 20 {
			return sock{}, false, errors.New("sock_diag: short error")
		}
		if e := int32(ne.Uint32(resp[16:])); e != 0 {
			return sock{}, false, fmt.Errorf("sock_diag: %w", unix.Errno(-e))
		}
		return sock{}, false, errors.New("sock_diag: acknowledged without an answer")
	case unix.SOCK_DIAG_BY_FAMILY:
	default:
		return sock{}, false, fmt.Errorf("sock_diag: unexpected message type %d", ne.Uint16(resp[4:]))
	}
	// struct inet_diag_msg: family, state, timer, retrans, id, expires,
	// rqueue, wqueue, uid, inode.
	m := resp[16:]
	if len(m) < 72 {
		return sock{}, false, errors.New("sock_diag: short inet_diag_msg")
	}
	// The kernel falls back to a listening socket whose port matches: only
	// the exact connection counts.
	if m[1] == tcpListen || !sameConn(m[0], m[4:40], client, server) {
		return sock{}, false, nil
	}
	return sock{ino: ne.Uint32(m[68:]), uid: ne.Uint32(m[64:])}, true, nil
}

// sameConn compares the ports and addresses of an answer's struct
// inet_diag_sockid with the connection asked about. An IPv4 lookup may
// answer with an IPv6 socket whose addresses are IPv4-mapped.
func sameConn(family uint8, id []byte, local, remote netip.AddrPort) bool {
	addr := func(b []byte) netip.Addr {
		if family == unix.AF_INET {
			return netip.AddrFrom4([4]byte(b[:4]))
		}
		return netip.AddrFrom16([16]byte(b[:16])).Unmap()
	}
	sport, dport := binary.BigEndian.Uint16(id[0:]), binary.BigEndian.Uint16(id[2:])
	return sport == local.Port() && dport == remote.Port() &&
		addr(id[4:20]) == bare(local.Addr()) && addr(id[20:36]) == bare(remote.Addr())
}

// bare is an address without its IPv6 zone and IPv4 mapping, as the
// kernel's tables show it.
func bare(a netip.Addr) netip.Addr { return a.WithZone("").Unmap() }

func zoneIndex(zone string) uint32 {
	if zone == "" {
		return 0
	}
	if n, err := strconv.ParseUint(zone, 10, 32); err == nil {
		return uint32(n)
	}
	if ifi, err := net.InterfaceByName(zone); err == nil {
		return uint32(ifi.Index)
	}
	return 0
}

// isLocal reports whether a is an address of this network namespace: a
// client there is on this host, and its socket must be in the tables.
func isLocal(a netip.Addr) (bool, error) {
	a = bare(a)
	if a.IsLoopback() || a.IsUnspecified() {
		return true, nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false, fmt.Errorf("listing this host's addresses: %w", err)
	}
	for _, ia := range addrs {
		if n, ok := ia.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && bare(ip) == a {
				return true, nil
			}
		}
	}
	return false, nil
}

const tcpListen = 10

// diagAddrs picks the family of the lookup. A connection whose ends are
// both IPv4, or IPv4 mapped into IPv6 (a dual-stack listener), is found by
// an IPv4 lookup whichever family its sockets have.
func diagAddrs(src, dst netip.Addr) (family uint8, s, d [16]byte) {
	src, dst = bare(src), bare(dst)
	if src.Is4() && dst.Is4() {
		a, b := src.As4(), dst.As4()
		copy(s[:], a[:])
		copy(d[:], b[:])
		return unix.AF_INET, s, d
	}
	return unix.AF_INET6, src.As16(), dst.As16()
}

// putSockID writes the ports and addresses of a struct inet_diag_sockid
// (network byte order).
func putSockID(b []byte, sport, dport uint16, src, dst [16]byte) {
	binary.BigEndian.PutUint16(b[0:], sport)
	binary.BigEndian.PutUint16(b[2:], dport)
	copy(b[4:20], src[:])
	copy(b[20:36], dst[:])
}

// procNet looks the socket up in /proc/net/tcp and /proc/net/tcp6.
func procNet(server, client netip.AddrPort) (sock, bool, error) {
	var firstErr error
	for _, t := range procNetKeys(server, client) {
		b, err := os.ReadFile(t.file)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if sk, ok := findProcNet(b, t.local, t.remote); ok {
			return sk, true, nil
		}
	}
	if firstErr != nil {
		return sock{}, false, fmt.Errorf("neither sock_diag nor /proc/net could be read: %w", firstErr)
	}
	return sock{}, false, nil
}

type procNetKey struct{ file, local, remote string }

// procNetKeys are the lines to look for: the client's socket in tcp when
// both ends are IPv4, and in tcp6 with the addresses IPv4-mapped (a client
// that dialled from an IPv6 socket) or as they are.
func procNetKeys(server, client netip.AddrPort) []procNetKey {
	s, c := bare(server.Addr()), bare(client.Addr())
	var keys []procNetKey
	if s.Is4() && c.Is4() {
		keys = append(keys, procNetKey{"/proc/self/net/tcp", hexAddr4(c, client.Port()), hexAddr4(s, server.Port())})
		s, c = netip.AddrFrom16(s.As16()), netip.AddrFrom16(c.As16())
	}
	return append(keys, procNetKey{"/proc/self/net/tcp6", hexAddr6(c, client.Port()), hexAddr6(s, server.Port())})
}

// hexAddr4 is an address as /proc/net/tcp prints it: the 32-bit word in
// the kernel's byte order, then the port.
func hexAddr4(a netip.Addr, port uint16) string {
	b := a.As4()
	return fmt.Sprintf("%08X:%04X", binary.NativeEndian.Uint32(b[:]), port)
}

func hexAddr6(a netip.Addr, port uint16) string {
	b := a.As16()
	ne := binary.NativeEndian
	return fmt.Sprintf("%08X%08X%08X%08X:%04X", ne.Uint32(b[0:]), ne.Uint32(b[4:]), ne.Uint32(b[8:]), ne.Uint32(b[12:]), port)
}

// findProcNet finds the line "sl local remote st tx:rx tr:when retrnsmt
// uid timeout inode ..." with the given addresses.
func findProcNet(table []byte, local, remote string) (sock, bool) {
	for len(table) > 0 {
		line := table
		if i := bytes.IndexByte(table, '\n'); i >= 0 {
			line, table = table[:i], table[i+1:]
		} else {
			table = nil
		}
		f := bytes.Fields(line)
		if len(f) < 10 || string(f[1]) != local || string(f[2]) != remote {
			continue
		}
		if string(f[3]) == "0A" { // TCP_LISTEN
			continue
		}
		uid, err1 := strconv.ParseUint(string(f[7]), 10, 32)
		ino, err2 := strconv.ParseUint(string(f[9]), 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		return sock{ino: uint32(ino), uid: uint32(uid)}, true
	}
	return sock{}, false
}
