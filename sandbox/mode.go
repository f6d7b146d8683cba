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
func ParseMode(s string) (Mode, error) {
	for _, m := range allModes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown mode %q: use one of %s", s, modeNames())
}

func modeNames() string {
	names := make([]string, len(allModes))
	for i, m := range allModes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
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

// ParseNetwork accepts "allow", "deny" or "restricted".
func ParseNetwork(s string) (Network, error) {
	if slices.Contains(Networks, Network(s)) {
		return Network(s), nil
	}
	return "", fmt.Errorf("unknown network setting %q: use allow, deny or restricted", s)
}

// Narrower reports whether n gives commands less network than o.
func (n Network) Narrower(o Network) bool {
	return slices.Index(Networks, n) > slices.Index(Networks, o)
}
