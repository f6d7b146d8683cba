package winacl

import (
	"crypto/rand"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Detect finds out whether this process can make the restricted token,
// by building one with the runner's own recipe. It is done once per
// process, and the outcome reported; the runner is then told which token
// to use.
func Detect() Decision {
	tok, err := newRestrictedToken(nil)
	if err == nil {
		tok.Close()
	}
	return decide(err)
}

var (
	modadvapi32               = windows.NewLazySystemDLL("advapi32.dll")
	procCreateRestrictedToken = modadvapi32.NewProc("CreateRestrictedToken")
)

// tokenDefaultDACL is TOKEN_DEFAULT_DACL.
type tokenDefaultDACL struct {
	DefaultDacl *windows.ACL
}

// newRestrictedToken builds the token of recipeFor from the
// process's own token: a primary token for CreateProcessAsUser.
func newRestrictedToken(grantSIDs []string) (windows.Token, error) {
	objectSID, err := newObjectSID(rand.Reader)
	if err != nil {
		return 0, err
	}
	recipe := recipeFor(grantSIDs, objectSID)
	var base windows.Token
	// The new token's handle gets the rights of this one: TOKEN_DUPLICATE
	// to derive it, ASSIGN_PRIMARY to start a process with it,
	// ADJUST_DEFAULT to set its default DACL.
	access := uint32(windows.TOKEN_DUPLICATE | windows.TOKEN_QUERY | windows.TOKEN_ASSIGN_PRIMARY | windows.TOKEN_ADJUST_DEFAULT)
	if err := windows.OpenProcessToken(windows.CurrentProcess(), access, &base); err != nil {
		return 0, fmt.Errorf("opening cordon's process token: %w", err)
	}
	defer base.Close()

	disable, err := sidsFromStrings(recipe.DisableSIDs)
	if err != nil {
		return 0, err
	}
	restricting, err := sidsFromStrings(recipe.RestrictingSIDs)
	if err != nil {
		return 0, err
	}
	if recipe.AddLogonSID {
		// A token without a logon session SID (some service logons) just
		// goes without: desktop access may then fail, which the probe sees.
		if logon := logonSID(base); logon != nil {
			restricting = append(restricting, windows.SIDAndAttributes{Sid: logon})
		}
	}
	tok, err := createRestrictedToken(base, recipe.Flags, disable, restricting)
	if err != nil {
		return 0, fmt.Errorf("CreateRestrictedToken: %w", err)
	}
	if err := setDefaultDACL(tok, base, recipe); err != nil {
		tok.Close()
		return 0, err
	}
	return tok, nil
}

func sidsFromStrings(list []string) ([]windows.SIDAndAttributes, error) {
	out := make([]windows.SIDAndAttributes, 0, len(list))
	for _, s := range list {
		sid, err := windows.StringToSid(s)
		if err != nil {
			return nil, fmt.Errorf("parsing SID %s: %w", s, err)
		}
		out = append(out, windows.SIDAndAttributes{Sid: sid})
	}
	return out, nil
}

// logonSID returns a copy of the token's logon session SID, or nil.
func logonSID(tok windows.Token) *windows.SID {
	groups, err := tok.GetTokenGroups()
	if err != nil {
		return nil
	}
	for _, g := range groups.AllGroups() {
		if g.Attributes&windows.SE_GROUP_LOGON_ID == windows.SE_GROUP_LOGON_ID {
			if sid, err := g.Sid.Copy(); err == nil {
				return sid
			}
		}
	}
	return nil
}

// createRestrictedToken calls CreateRestrictedToken, which x/sys/windows
// does not wrap. No privileges are listed: DISABLE_MAX_PRIVILEGE drops
// them all.
func createRestrictedToken(base windows.Token, flags uint32, disable, restricting []windows.SIDAndAttributes) (windows.Token, error) {
	// The arrays hold pointers to SIDs on the Go heap: pin them for the
	// call.
	var pin runtime.Pinner
	defer pin.Unpin()
	var pDisable, pRestrict *windows.SIDAndAttributes
	if len(disable) > 0 {
		pDisable = &disable[0]
		pin.Pin(pDisable)
	}
	if len(restricting) > 0 {
		pRestrict = &restricting[0]
		pin.Pin(pRestrict)
	}
	for _, list := range [][]windows.SIDAndAttributes{disable, restricting} {
		for _, s := range list {
			pin.Pin(s.Sid)
		}
	}
	var tok windows.Token
	r1, _, e1 := procCreateRestrictedToken.Call(
		uintptr(base), uintptr(flags),
		uintptr(len(disable)), uintptr(unsafe.Pointer(pDisable)),
		0, 0,
		uintptr(len(restricting)), uintptr(unsafe.Pointer(pRestrict)),
		uintptr(unsafe.Pointer(&tok)),
	)
	if r1 == 0 {
		return 0, e1
	}
	return tok, nil
}

// setDefaultDACL gives tok the recipe's default DACL: full access for the
// user, SYSTEM and the object SID.
func setDefaultDACL(tok, base windows.Token, recipe tokenRecipe) error {
	sids, err := sidsFromStrings(recipe.DefaultDACLSIDs)
	if err != nil {
		return err
	}
	if recipe.DefaultDACLUser {
		user, err := base.GetTokenUser()
		if err != nil {
			return fmt.Errorf("reading the token's user: %w", err)
		}
		sid, err := user.User.Sid.Copy()
		if err != nil {
			return fmt.Errorf("copying the user's SID: %w", err)
		}
		sids = append(sids, windows.SIDAndAttributes{Sid: sid})
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	entries := make([]windows.EXPLICIT_ACCESS, 0, len(sids))
	for _, s := range sids {
		pin.Pin(s.Sid)
		entries = append(entries, windows.EXPLICIT_ACCESS{
			AccessPermissions: windows.GENERIC_ALL,
			AccessMode:        windows.GRANT_ACCESS,
			Inheritance:       windows.NO_INHERITANCE,
			Trustee: windows.TRUSTEE{
				TrusteeForm:  windows.TRUSTEE_IS_SID,
				TrusteeType:  windows.TRUSTEE_IS_UNKNOWN,
				TrusteeValue: windows.TrusteeValueFromSID(s.Sid),
			},
		})
	}
	acl, err := windows.ACLFromEntries(entries, nil)
	if err != nil {
		return fmt.Errorf("building the token's default DACL: %w", err)
	}
	info := tokenDefaultDACL{DefaultDacl: acl}
	pin.Pin(acl)
	if err := windows.SetTokenInformation(tok, windows.TokenDefaultDacl, (*byte)(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		return fmt.Errorf("setting the token's default DACL: %w", err)
	}
	return nil
}
