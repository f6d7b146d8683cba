package winacl

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cordonhq/cordon/internal/pathx"
)

// Policy is what the backend reads of a resolved policy (sandbox's
// ExecutionPolicy): absolute paths, canonical where they exist.
type Policy struct {
	// WritableRoots are where the command may write: each gets a grant SID
	// and an inheritable grant.
	WritableRoots []string
	// Protected stay read-only inside the writable roots.
	Protected []string
	// ReadDeny, NetworkDeny: asked for, but not enforced by this backend;
	// Confine names them among what is left unenforced.
	ReadDeny    []string
	NetworkDeny bool
	// TmpDir is the session tmp, where TEMP, TMP and TMPDIR point.
	TmpDir string
}

// ErrProtectedLink is returned when a protected path is, or passes
// through, a symbolic link, junction or other reparse point. Its message
// is that of the sandbox package's error for the same refusal, which
// sandbox wraps it in.
var ErrProtectedLink = errors.New("protected path is a symlink")

// ace is one access-control entry the backend makes sure exists.
type ace struct {
	Path string
	SID  string
	Mask uint32
	Deny bool
	// Inherit adds OBJECT_INHERIT_ACE|CONTAINER_INHERIT_ACE: the entry
	// covers everything beneath a directory, present and future. Without
	// it the entry covers the object itself only.
	Inherit bool
}

// aclPlan is what one policy needs on disk and in the token. Every
// entry is standing: grants are the reuse cache described at
// grantSID, and deny entries must outlive any one command because
// a command of another session may be writing concurrently.
type aclPlan struct {
	// TokenSIDs are the grant SIDs the command's token carries, one per
	// writable root, in WritableRoots order.
	TokenSIDs []string
	// Grants give each writable root's SID write beneath it.
	Grants []ace
	// Denies keep existing protected paths read-only and pin them: see
	// planProtected.
	Denies []ace
	// Missing are protected paths that do not exist yet. NTFS cannot deny
	// a name that does not exist, so nothing stops their creation.
	Missing []string
}

// makePlan works out the ACL entries and token SIDs for a policy.
func makePlan(p Policy) (aclPlan, error) {
	var plan aclPlan
	for _, root := range p.WritableRoots {
		sid := grantSID(root)
		plan.TokenSIDs = append(plan.TokenSIDs, sid)
		plan.Grants = append(plan.Grants, ace{Path: root, SID: sid, Mask: grantMask, Inherit: true})
		// The grant reaches the root itself, DELETE included: without
		// this a command could move the whole workspace into the session
		// tmp (DELETE on the source, add-subdirectory on the target).
		plan.addDeny(ace{Path: root, SID: sid, Mask: deleteAccess})
	}
	for _, prot := range p.Protected {
		if err := plan.planProtected(prot, p.WritableRoots); err != nil {
			return aclPlan{}, err
		}
	}
	return plan, nil
}

// planProtected adds the entries that keep one protected path read-only
// for every root that contains it (roots may nest, and a token of a
// nested root's policy carries both SIDs).
//
// Denying write on the path is not enough on NTFS: a file may also be
// deleted or renamed by whoever has FILE_DELETE_CHILD on its directory,
// and replacing a parent (.git renamed away, a new one made) would leave
// the protected entry behind under another name. So every existing
// component from the root down is pinned: DELETE denied on it and
// FILE_DELETE_CHILD denied on its directory, on those objects only.
// Siblings stay deletable through their own inherited DELETE right.
func (plan *aclPlan) planProtected(prot string, roots []string) error {
	for _, root := range roots {
		if !pathx.Within(prot, root) {
			continue
		}
		if prot == root {
			// A root that is itself protected (cordon's state directory
			// given as a workspace) stays read-only as a whole.
			plan.addDeny(ace{Path: root, SID: grantSID(root), Mask: denyWriteMask, Inherit: true})
			continue
		}
		comps, missing, err := protectedComponents(root, prot)
		if err != nil {
			return err
		}
		sid := grantSID(root)
		for i, c := range comps {
			last := i == len(comps)-1 && missing == ""
			if last {
				plan.addDeny(ace{Path: c.Path, SID: sid, Mask: denyWriteMask, Inherit: c.Dir})
			} else {
				plan.addDeny(ace{Path: c.Path, SID: sid, Mask: deleteAccess})
			}
			plan.addDeny(ace{Path: filepath.Dir(c.Path), SID: sid, Mask: fileDeleteChild})
		}
		if missing != "" && !slices.Contains(plan.Missing, prot) {
			plan.Missing = append(plan.Missing, prot)
		}
	}
	return nil
}

// addDeny merges e into an existing entry for the same object, SID and
// inheritance, so each object gets one deny entry per SID and kind.
func (plan *aclPlan) addDeny(e ace) {
	e.Deny = true
	for i, d := range plan.Denies {
		if d.Path == e.Path && d.SID == e.SID && d.Inherit == e.Inherit {
			plan.Denies[i].Mask |= e.Mask
			return
		}
	}
	plan.Denies = append(plan.Denies, e)
}

// component is one existing component of a protected path.
type component struct {
	Path string
	Dir  bool
}

// protectedComponents walks prot from root (excluded) one component at
// a time without following links. It returns the components that exist;
// missing is the first one that does not ("" when prot exists). A
// non-directory met before prot ends the walk as the last component: it is
// what keeps the rest of the path from being made (a linked worktree's
// .git file). Symbolic links, junctions and other reparse points are
// refused, as for every backend: protecting through one could protect the
// wrong place.
func protectedComponents(root, prot string) (comps []component, missing string, err error) {
	w, err := pathx.WalkComponents(root, prot)
	switch {
	case err != nil:
		return nil, "", fmt.Errorf("protected path %s: %w", prot, err)
	case w.Link != "":
		return nil, "", fmt.Errorf("%w: %s passes through the link or reparse point %s; refusing to build a sandbox that would follow it", ErrProtectedLink, prot, w.Link)
	}
	for _, s := range w.Steps {
		comps = append(comps, component{Path: s.Path, Dir: s.Dir})
	}
	return comps, w.Missing, nil
}
