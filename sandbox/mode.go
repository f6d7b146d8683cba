// Package sandbox decides what a command may touch and confines it there.
//
// It turns a session's settings into one ExecutionPolicy, computes the
// writable roots that every consumer shares, and hands confined policies to
// an OS backend (bwrap, Landlock, Seatbelt) that rewrites an argv into a
// confined one. It knows nothing of MCP.
package sandbox

import (
	"fmt"
	"slices"
	"strings"
)

// Mode is how much of the file system a command may change.
type Mode string

// The three modes, narrowest first.
const (
	ReadOnly         Mode = "read-only"
	WorkspaceWrite   Mode = "workspace-write"
	DangerFullAccess Mode = "danger-full-access"
)

// allModes lists every mode, narrowest first.
var allModes = []Mode{ReadOnly, WorkspaceWrite, DangerFullAccess}

// ParseMode accepts exactly the names of the modes.
func ParseMode(s string) (Mode, error) { return parseName("mode", s, allModes) }

// parseName accepts exactly one of names; anything else is refused with
// every name it could have been.
func parseName[T ~string](what, s string, names []T) (T, error) {
	if i := slices.Index(names, T(s)); i >= 0 {
		return names[i], nil
	}
	list := make([]string, len(names))
	for i, n := range names {
		list[i] = string(n)
	}
	return "", fmt.Errorf("unknown %s %q: use one of %s", what, s, strings.Join(list, ", "))
}

// Valid reports whether m is one of the three modes.
func (m Mode) Valid() bool { return m.rank() >= 0 }

// rank orders modes by how much they allow; -1 for an unknown mode.
func (m Mode) rank() int {
	for i, known := range allModes {
		if m == known {
			return i
		}
	}
	return -1
}

// WiderThan reports whether m allows strictly more than other.
func (m Mode) WiderThan(other Mode) bool {
	return m.Valid() && other.Valid() && m.rank() > other.rank()
}

// Confined reports whether commands in this mode run inside a backend.
func (m Mode) Confined() bool { return m == ReadOnly || m == WorkspaceWrite }

// Narrowest returns the narrower of two modes. An unknown mode counts as
// read-only so that a corrupt value can only ever tighten.
func Narrowest(a, b Mode) Mode {
	if !a.Valid() || !b.Valid() {
		return ReadOnly
	}
	if a.rank() < b.rank() {
		return a
	}
	return b
}

func (m Mode) String() string { return string(m) }

// Network says whether confined commands may use the network.
type Network string

// Network settings.
const (
	NetworkAllow Network = "allow"
	NetworkDeny  Network = "deny"
	// NetworkRestricted: no direct network; the command reaches the hosts
	// the allow list names (and those the human allows) only through
	// cordon's egress proxy.
	NetworkRestricted Network = "restricted"
)

// Networks are the settings, loosest first.
var Networks = []Network{NetworkAllow, NetworkRestricted, NetworkDeny}

// ParseNetwork accepts "allow", "restricted" or "deny".
func ParseNetwork(s string) (Network, error) { return parseName("network setting", s, Networks) }

// Narrower reports whether n gives commands less network than o.
func (n Network) Narrower(o Network) bool {
	return slices.Index(Networks, n) > slices.Index(Networks, o)
}
