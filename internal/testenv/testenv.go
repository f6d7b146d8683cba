// Package testenv holds what cordon's tests share about the machine they
// run on. It is for tests only.
package testenv

import (
	"net"
	"net/netip"
	"os"
	"testing"
)

// SkipUnlessCI skips a test this machine cannot run, saying why; in CI
// (CORDON_CI, set by .ci/run, which runs as root and installs every tool
// the tests need) it fails instead: a security test skipped there would
// prove nothing and look green.
func SkipUnlessCI(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CORDON_CI") != "" {
		t.Fatalf("%s: CI must run this test (.ci/run installs what it needs)", why)
	}
	t.Skip("skipped: " + why)
}

// InterfaceAddr is one of this machine's real interface addresses, other
// than loopback and link-local (which need a zone to be dialled),
// preferring one outside the private ranges: a test that a public address
// of the host is treated as the host's own proves most with one. It
// skips (fails in CI) on a machine with no such address.
func InterfaceAddr(t testing.TB) netip.Addr {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatalf("listing interface addresses: %v", err)
	}
	var found []netip.Addr
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, _ := netip.AddrFromSlice(n.IP)
		ip = ip.Unmap()
		if ip.IsValid() && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() {
			found = append(found, ip)
		}
	}
	if len(found) == 0 {
		SkipUnlessCI(t, "this machine has no interface address but loopback and link-local")
	}
	cgnat := netip.MustParsePrefix("100.64.0.0/10")
	for _, ip := range found {
		if !ip.IsPrivate() && !cgnat.Contains(ip) {
			return ip
		}
	}
	t.Logf("every interface address here is private (%v): the test proves less than on a machine with a public one", found)
	return found[0]
}
