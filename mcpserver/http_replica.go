package mcpserver

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mark3labs/mcp-go/server"
)

// replicaIDs prefixes every Mcp-Session-Id this server generates with
// "NAME.", so that a gateway in front of several replicas can route each
// request of a session to the replica that holds it, by the id alone.
// The ids are otherwise mcp-go's stateful ones: an id this replica did not
// issue is unknown here (404).
type replicaIDs struct {
	prefix string
	ids    server.InsecureStatefulSessionIdManager
}

var validReplica = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,62}$`)

// ValidateReplica refuses a replica name that a gateway could not match
// as a prefix up to the first '.'.
func ValidateReplica(name string) error {
	if !validReplica.MatchString(name) {
		return fmt.Errorf("replica name %q: use 1 to 63 letters, digits or '-', starting with a letter or digit (no '.': it ends the prefix)", name)
	}
	return nil
}

func (r *replicaIDs) Generate() string { return r.prefix + r.ids.Generate() }

func (r *replicaIDs) Validate(id string) (bool, error) {
	rest, ok := strings.CutPrefix(id, r.prefix)
	if !ok {
		return false, fmt.Errorf("session %q was not issued by this replica", id)
	}
	return r.ids.Validate(rest)
}

func (r *replicaIDs) Terminate(id string) (bool, error) {
	rest, ok := strings.CutPrefix(id, r.prefix)
	if !ok {
		return false, fmt.Errorf("session %q was not issued by this replica", id)
	}
	return r.ids.Terminate(rest)
}
