package winacl

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// Well-known SIDs the token recipe names.
const (
	sidEveryone       = "S-1-1-0"
	sidLocalSystem    = "S-1-5-18"
	sidAdministrators = "S-1-5-32-544"
	sidLocalAdmin     = "S-1-5-114" // local account and member of Administrators
)

// cordon's SIDs live under the resource-manager authority (S-1-9), which
// no account is ever issued from, with a first sub-authority that spells
// "cord" so an administrator can tell cordon's ACL entries at a glance.
const (
	sidPrefix       = "S-1-9-1668248164-"
	sidGrantPrefix  = sidPrefix + "1-" // one per writable root
	sidObjectPrefix = sidPrefix + "2-" // one per runner, for its own objects
)

// grantSID is the SID that may write beneath root. It is derived
// from the root's path, so it is the same in every cordon process and
// every session: the inherited grant on a large workspace is propagated
// once per machine instead of once per command, concurrent cordons that
// rewrite the same DACL write the same entries, and nothing accumulates.
// Carrying the SID never widens anything by itself: a restricting SID can
// only take access away. The path is lowercased because NTFS is
// case-insensitive.
func grantSID(root string) string {
	sum := sha256.Sum256([]byte("cordon windows-acl grant v1\x00" + strings.ToLower(filepath.Clean(root))))
	return sidGrantPrefix + sidSubAuthorities(sum[:16])
}

// newObjectSID returns a fresh SID for the objects one runner's
// command creates (pipes, events, its processes): the token's default DACL
// grants it, so confined processes can use what they make, and nothing
// outside that one command carries it.
func newObjectSID(random io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("making the object SID: %w", err)
	}
	return sidObjectPrefix + sidSubAuthorities(b[:]), nil
}

func sidSubAuthorities(b []byte) string {
	parts := make([]string, 0, len(b)/4)
	for i := 0; i+4 <= len(b); i += 4 {
		parts = append(parts, strconv.FormatUint(uint64(binary.BigEndian.Uint32(b[i:])), 10))
	}
	return strings.Join(parts, "-")
}

// validGrantSID reports whether s has the shape grantSID makes.
func validGrantSID(s string) bool {
	rest, ok := strings.CutPrefix(s, sidGrantPrefix)
	if !ok {
		return false
	}
	parts := strings.Split(rest, "-")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if _, err := strconv.ParseUint(p, 10, 32); err != nil {
			return false
		}
	}
	return true
}
