//go:build !linux

package peer

import "net/netip"

// Checker tells whether the client of a TCP connection runs inside a
// cordon sandbox. Outside Linux it allows every client: the sandbox
// itself denies the port (macOS's Seatbelt profile).
type Checker struct{}

// New makes a Checker.
func New(Options) (*Checker, error) { return &Checker{}, nil }

func (c *Checker) check(netip.AddrPort, netip.AddrPort) Verdict {
	return allow("clients are not checked on this system")
}

// RegisterHelpers records cordon's own helpers: nothing to record here.
func RegisterHelpers(int) (release func()) { return func() {} }

// RegisterHelper records one helper: nothing to record here.
func RegisterHelper(int) (release func()) { return func() {} }

// RegisterStarting records a starting sandbox: nothing to record here.
func RegisterStarting(int) (ready, release func()) { return func() {}, func() {} }
