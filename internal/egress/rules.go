package egress

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Rules decide which hosts a confined command may reach through the proxy:
// a host in Allowed and not in Denied (deny wins). An entry is a name
// ("example.com": that name exactly), a wildcard ("*.example.com": any
// name beneath it, not the name itself), or an IP address; any of them
// may end in ":PORT" to allow that port only. Loopback, link-local and
// private addresses, and the machine's own interface addresses, are never
// reached through a name: only an entry that names the IP itself, or
// "localhost:PORT", opens them. A denied IP entry refuses that address
// however it is reached: written out, or behind a name that resolves to it.
type Rules struct {
	Allowed, Denied []string
}

// entry is one parsed rule.
type entry struct {
	raw      string
	host     string // lower-case, without a trailing dot; "" for an IP entry
	wildcard bool   // host is the suffix of "*.host"
	ip       netip.Addr
	port     int // 0: any
}

// ParseEntry checks one entry; the config loader reports its error.
func ParseEntry(s string) error {
	_, err := parseEntry(s)
	return err
}

func parseEntry(s string) (entry, error) {
	e := entry{raw: s}
	hostPart := strings.TrimSpace(s)
	if h, p, err := net.SplitHostPort(hostPart); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return e, fmt.Errorf("%q: the port must be a number from 1 to 65535", s)
		}
		hostPart, e.port = h, n
	}
	hostPart = strings.TrimSuffix(strings.ToLower(hostPart), ".")
	if ip, err := netip.ParseAddr(hostPart); err == nil {
		e.ip = ip.Unmap()
		return e, nil
	}
	if rest, ok := strings.CutPrefix(hostPart, "*."); ok {
		e.wildcard, hostPart = true, rest
	}
	if hostPart == "" || strings.ContainsAny(hostPart, "*/ @") || strings.HasPrefix(hostPart, ".") {
		return e, fmt.Errorf("%q is not a host name, a *.name wildcard or an IP address (optionally with :PORT)", s)
	}
	e.host = hostPart
	return e, nil
}

// matches reports whether the entry covers host:port (host normalized).
func (e entry) matches(host string, ip netip.Addr, port int) bool {
	if e.port != 0 && e.port != port {
		return false
	}
	switch {
	case e.ip.IsValid():
		return ip.IsValid() && e.ip == ip
	case e.wildcard:
		return strings.HasSuffix(host, "."+e.host)
	}
	return host == e.host
}

// explicit reports whether the entry names an address a name alone may not
// reach: the IP itself, or localhost with a port.
func (e entry) explicit(ip netip.Addr) bool {
	return (e.ip.IsValid() && e.ip == ip) || (e.host == "localhost" && e.port != 0 && ip.IsLoopback())
}

// Verdict is what the rules say of a host.
type Verdict int

// The verdicts.
const (
	Unlisted Verdict = iota // neither allowed nor denied: ask, or refuse
	Allowed
	Denied
)

// compiled rules.
type ruleSet struct {
	allowed, denied []entry
}

func compile(r Rules) (*ruleSet, error) {
	rs := &ruleSet{}
	for _, l := range []struct {
		in  []string
		out *[]entry
	}{{r.Allowed, &rs.allowed}, {r.Denied, &rs.denied}} {
		for _, s := range l.in {
			e, err := parseEntry(s)
			if err != nil {
				return nil, err
			}
			*l.out = append(*l.out, e)
		}
	}
	return rs, nil
}

// verdict judges host:port, and names the entry that decided.
func (rs *ruleSet) verdict(host string, port int) (Verdict, *entry) {
	ip, _ := netip.ParseAddr(host)
	ip = ip.Unmap()
	for i, e := range rs.denied {
		if e.matches(host, ip, port) {
			return Denied, &rs.denied[i]
		}
	}
	for i, e := range rs.allowed {
		if e.matches(host, ip, port) {
			return Allowed, &rs.allowed[i]
		}
	}
	return Unlisted, nil
}

// deniedAddress is the denied_domains entry naming ip (on port), or nil.
// verdict matches an IP entry only against a host written as that IP; a
// name that resolves to a denied address is caught here, as the proxy
// connects: deny wins whichever way the address was reached.
func (rs *ruleSet) deniedAddress(ip netip.Addr, port int) *entry {
	ip = ip.Unmap()
	v4, carries := embeddedIPv4(ip)
	for i, e := range rs.denied {
		if e.ip.IsValid() && (e.matches("", ip, port) || carries && e.matches("", v4, port)) {
			return &rs.denied[i]
		}
	}
	return nil
}

// allowsAddress reports whether a connection asked for as host may go to
// ip: public addresses always; loopback, link-local, private ones and the
// machine's own only when host itself names them (the IP, or localhost)
// and an entry names that same address — an allowed name that resolves
// home opens nothing.
func (rs *ruleSet) allowsAddress(host string, ip netip.Addr, port int) bool {
	ip = ip.Unmap()
	if !special(ip) {
		return true
	}
	if !namesAddress(host, ip) {
		return false
	}
	for _, e := range rs.allowed {
		if (e.port == 0 || e.port == port) && e.explicit(ip) {
			return true
		}
	}
	return false
}

// namesAddress reports whether host is ip written out, or localhost for a
// loopback address.
func namesAddress(host string, ip netip.Addr) bool {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap() == ip
	}
	return host == "localhost" && ip.IsLoopback()
}

// special are the addresses a name may not lead to: the machine itself
// (loopback, and every address of its own interfaces, where a service
// bound to 0.0.0.0 answers as on loopback), the local networks, the cloud
// metadata service (link-local), and what is not an address of a host at
// all.
func special(ip netip.Addr) bool {
	if v4, ok := embeddedIPv4(ip); ok && special(v4) {
		return true
	}
	return reserved(ip) || ownAddress(ip)
}

// Ranges of IPv6 that reach IPv4: a translator or a tunnel delivers a
// connection to the IPv4 address the IPv6 one carries.
var (
	nat64Prefix  = netip.MustParsePrefix("64:ff9b::/96")   // well-known NAT64 (RFC 6052)
	nat64Local   = netip.MustParsePrefix("64:ff9b:1::/48") // local-use NAT64 (RFC 8215): a site's own translator
	sixToFour    = netip.MustParsePrefix("2002::/16")      // 6to4 (RFC 3056)
	v4Compatible = netip.MustParsePrefix("::/96")          // IPv4-compatible (deprecated)
)

// embeddedIPv4 is the IPv4 address that ip carries to an IPv4 network, if
// it is one of those that do: a name resolving to 64:ff9b::7f00:1 on a
// host behind DNS64 reaches 127.0.0.1 (or, through the NAT gateway, a
// private address of the same network).
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() || ip.Is4In6() {
		return netip.Addr{}, false
	}
	b := ip.As16()
	switch {
	case nat64Prefix.Contains(ip), v4Compatible.Contains(ip) && !ip.IsLoopback() && !ip.IsUnspecified():
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// reserved are the special addresses that a fixed range names. A
// local-use NAT64 prefix carries its IPv4 address where the site chose
// to: all of it is a site's own network.
func reserved(ip netip.Addr) bool {
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() ||
		netip.MustParsePrefix("100.64.0.0/10").Contains(ip) || // carrier-grade NAT
		netip.MustParsePrefix("fc00::/7").Contains(ip) || // unique local (IsPrivate covers it too)
		nat64Local.Contains(ip)
}

// local reports whether a connection to ip ends on this machine: loopback
// (all of 127.0.0.0/8), the unspecified address (which Linux connects to
// loopback), an address of one of its interfaces, or an IPv6 address that
// carries one of those.
func local(ip netip.Addr) bool {
	if v4, ok := embeddedIPv4(ip); ok && local(v4) {
		return true
	}
	return ip.IsLoopback() || ip.IsUnspecified() || ownAddress(ip)
}

// Describe says, for the human asked about host, what an IP address there
// is when it is not an ordinary public one ("" otherwise, and for a name):
// written as 0:0:0:0:0:ffff:c000:202 or 0.0.0.0, nobody can tell.
func Describe(host string) string {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return ""
	}
	ip = ip.Unmap()
	carried := ""
	if v4, ok := embeddedIPv4(ip); ok {
		carried = ", carrying the IPv4 address " + v4.String()
		ip = v4
	}
	switch {
	case ip.IsLoopback() || ip.IsUnspecified():
		return "this machine (loopback)" + carried
	case ownAddress(ip):
		return "this machine (one of its own addresses)" + carried
	case ip.IsLinkLocalUnicast():
		return "link-local (where cloud metadata services answer)" + carried
	case reserved(ip):
		return "a private or local network" + carried
	}
	if carried != "" {
		return "an IPv6 address" + carried
	}
	return ""
}

// ownAddress reports whether ip is an address of one of this machine's
// interfaces (a public one included). Interfaces gain and lose addresses
// while cordon runs (DHCP, a VPN, a hot-plugged link), so they are looked
// up at each decision, never remembered: a lookup costs about 30 µs
// (one netlink dump), against the milliseconds of any connection that
// leaves the machine, and only a connection to an address no fixed range
// made special pays it. A lookup that fails counts as "ours": the
// proxy refuses rather than guesses.
func ownAddress(ip netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return true
	}
	ip = ip.Unmap().WithZone("")
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if own, ok := netip.AddrFromSlice(n.IP); ok && own.Unmap() == ip {
				return true
			}
		}
	}
	return false
}

// checkHost says why host (normalized) is not one host — a host name or
// an IP address — or returns nil. The proxy asks the human only about one
// host, and an allow_session answer is stored as the allowed_domains entry
// "host:PORT": a "*" (which parseEntry reads as a wildcard), a space, an
// empty label or an IP with a zone would turn one approval into a
// pattern, or into an entry that names nothing. A name whose last label
// is a number ("127.1", "0x7f.1") is refused too: resolvers read some of
// them as IPv4 addresses.
func checkHost(host string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return fmt.Errorf("an IP address with a zone (%q) names no one host", ip.Zone())
		}
		return nil
	}
	if host == "" || len(host) > 253 {
		return fmt.Errorf("a host name has 1 to 253 characters")
	}
	labels := strings.Split(host, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return fmt.Errorf("each dot-separated label of a host name has 1 to 63 characters")
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("a label of a host name neither starts nor ends with '-'")
		}
		for _, c := range []byte(l) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("a host name has only letters, digits, '-' and '_' (an international name in its xn-- form), not %q", c)
			}
		}
	}
	last := labels[len(labels)-1]
	if strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		return fmt.Errorf("a host name does not end in a number; an IP address is written out in full")
	}
	return nil
}

// normalizeHost lower-cases a host and drops a trailing dot and brackets.
func normalizeHost(h string) string {
	h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(h, "]"), "["), ".")
	return strings.ToLower(h)
}
