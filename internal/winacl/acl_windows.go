package winacl

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Apply makes sure every ACL entry the command needs exists. With the
// user's own token (the fallback) no entry would change anything, and
// none is written.
func (c *Confinement) Apply() error {
	if c.token != TokenRestricted {
		return nil
	}
	return applyPlan(c.plan)
}

// aclMu serialises this process's DACL rewrites: each is a
// read-modify-write of a whole DACL, and two at once on the same object
// would lose one's entry. Other cordon processes write the same entries
// (the SIDs are derived from paths), so a race with them loses nothing.
var aclMu sync.Mutex

// applyPlan makes sure every entry of the plan exists: grants first,
// so the inheritable grant on a root is propagated before the explicit
// deny entries below it are set.
func applyPlan(plan aclPlan) error {
	aclMu.Lock()
	defer aclMu.Unlock()
	for _, e := range plan.Grants {
		if err := ensureACE(e); err != nil {
			return fmt.Errorf("granting the sandbox write access beneath %s: %w%s", e.Path, err, ownershipHint(err))
		}
	}
	for _, e := range plan.Denies {
		if err := ensureACE(e); err != nil {
			return fmt.Errorf("keeping %s read-only in the sandbox: %w%s", e.Path, err, ownershipHint(err))
		}
	}
	return nil
}

func ownershipHint(err error) string {
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return " (cordon can only change the permissions of files and directories you own)"
	}
	return ""
}

// ensureACE adds e to its object's DACL unless an explicit entry of the
// same kind, SID and inheritance already grants (or denies) at least its
// rights. The check keeps the common case to one read: rewriting a root's
// DACL re-propagates it to the whole tree.
func ensureACE(e ace) error {
	sid, err := windows.StringToSid(e.SID)
	if err != nil {
		return fmt.Errorf("parsing SID %s: %w", e.SID, err)
	}
	sd, err := windows.GetNamedSecurityInfo(e.Path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("reading the DACL: %w", err)
	}
	var dacl *windows.ACL
	if sd != nil {
		dacl, _, err = sd.DACL()
	}
	if sd == nil || errors.Is(err, windows.ERROR_OBJECT_NOT_FOUND) || dacl == nil {
		// No DACL: everyone, Everyone among the restricting SIDs, may do
		// anything. A grant is not needed; a deny cannot be added without
		// writing a DACL that would lock everyone else out.
		if !e.Deny {
			return nil
		}
		return errors.New("it has no DACL (everyone has full access); give it one (e.g. by re-enabling inheritance) so cordon can protect it")
	}
	if err != nil {
		return fmt.Errorf("reading the DACL: %w", err)
	}
	if hasACE(dacl, sid, e) {
		return nil
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(sid)
	mode := windows.ACCESS_MODE(windows.GRANT_ACCESS)
	if e.Deny {
		mode = windows.DENY_ACCESS
	}
	inherit := uint32(windows.NO_INHERITANCE)
	if e.Inherit {
		inherit = windows.SUB_CONTAINERS_AND_OBJECTS_INHERIT
	}
	entry := []windows.EXPLICIT_ACCESS{{
		AccessPermissions: windows.ACCESS_MASK(e.Mask),
		AccessMode:        mode,
		Inheritance:       inherit,
		Trustee: windows.TRUSTEE{
			TrusteeForm:  windows.TRUSTEE_IS_SID,
			TrusteeType:  windows.TRUSTEE_IS_UNKNOWN,
			TrusteeValue: windows.TrusteeValueFromSID(sid),
		},
	}}
	// SetEntriesInAcl puts deny entries before allow entries, the order
	// in which Windows needs them for a deny to win.
	merged, err := windows.ACLFromEntries(entry, dacl)
	if err != nil {
		return fmt.Errorf("building the DACL: %w", err)
	}
	// Inherited entries in merged are dropped and recomputed from the
	// parent, and the object's protection state is kept.
	if err := windows.SetNamedSecurityInfo(e.Path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION, nil, nil, merged, nil); err != nil {
		return fmt.Errorf("writing the DACL: %w", err)
	}
	return nil
}

// hasACE reports whether dacl has an explicit entry for sid of e's kind
// and inheritance whose mask covers e's.
func hasACE(dacl *windows.ACL, sid *windows.SID, e ace) bool {
	wantType := uint8(windows.ACCESS_ALLOWED_ACE_TYPE)
	if e.Deny {
		wantType = windows.ACCESS_DENIED_ACE_TYPE
	}
	var wantFlags uint8
	if e.Inherit {
		wantFlags = windows.OBJECT_INHERIT_ACE | windows.CONTAINER_INHERIT_ACE
	}
	const flagMask = windows.OBJECT_INHERIT_ACE | windows.CONTAINER_INHERIT_ACE | windows.INHERIT_ONLY_ACE | windows.INHERITED_ACE
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE // a denied ACE has the same layout
		if windows.GetAce(dacl, i, &ace) != nil {
			continue
		}
		if ace.Header.AceType != wantType || ace.Header.AceFlags&flagMask != wantFlags {
			continue
		}
		aceSID := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		if uint32(ace.Mask)&e.Mask == e.Mask && aceSID.Equals(sid) {
			return true
		}
	}
	return false
}
