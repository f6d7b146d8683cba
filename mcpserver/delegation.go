package mcpserver

import (
	"errors"
	"fmt"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
)

// maxDelegationDepth bounds a chain of sub-agents of sub-agents: deeper
// than any real use, and a log naming itself an ancestor ends somewhere.
const maxDelegationDepth = 16

// parentChain is a delegated session's ceiling (SPEC §6): the modes of its
// parent, its parent's parent and so on, read from their logs at every
// call, never copied once. Narrowing any of them narrows the sub-agent
// from its next call on, and the narrowing check ends its wider
// processes. It serves sub-agents over stdio and HTTP alike.
type parentChain struct {
	followers []*sessionlog.Follower
}

// openParentChain follows parent's log and those of its own parents.
func openParentChain(dir, parent string) (*parentChain, error) {
	pc := &parentChain{}
	seen := map[string]bool{}
	for id := parent; id != ""; {
		if seen[id] || len(pc.followers) == maxDelegationDepth {
			pc.Close()
			return nil, fmt.Errorf("session %s: its chain of parents loops or is deeper than %d", parent, maxDelegationDepth)
		}
		seen[id] = true
		f, err := sessionlog.Follow(dir, id)
		if err != nil {
			pc.Close()
			return nil, err
		}
		pc.followers = append(pc.followers, f)
		id = f.Start().ParentSession
	}
	if _, err := pc.Mode(); err != nil {
		pc.Close()
		return nil, err
	}
	return pc, nil
}

// Mode is the narrowest of the chain's modes now. Any that cannot be told
// is an error, which the session turns into read-only.
func (pc *parentChain) Mode() (sandbox.Mode, error) {
	var narrowest sandbox.Mode
	for _, f := range pc.followers {
		s, err := f.Mode()
		if err != nil {
			return "", err
		}
		m, err := sandbox.ParseMode(s)
		if err != nil {
			return "", fmt.Errorf("cannot tell the parent's mode (%q): %w", s, err)
		}
		if narrowest == "" {
			narrowest = m
		} else {
			narrowest = sandbox.Narrowest(narrowest, m)
		}
	}
	if narrowest == "" {
		return "", errors.New("no parent session")
	}
	return narrowest, nil
}

// Close closes the parents' logs.
func (pc *parentChain) Close() error {
	for _, f := range pc.followers {
		f.Close()
	}
	pc.followers = nil
	return nil
}
