package winacl

import "slices"

// Token says which token the runner starts the command with.
type Token string

const (
	// TokenRestricted is the write-restricted token of the recipe.
	TokenRestricted Token = "restricted"
	// TokenCurrent is the fallback: the user's own token, so the OS
	// enforces no part of the file-system boundary.
	TokenCurrent Token = "current"
)

// Decision is what detection found: a restricted token can be
// had, or the fallback and why. It is made once per process and reported;
// the runner is told which token to use and never downgrades by itself.
type Decision struct {
	Token Token
	// Reason is why no restricted token could be made (TokenCurrent).
	Reason string
}

// decide takes the outcome of trying to build a restricted
// token at detection.
func decide(restrictedErr error) Decision {
	if restrictedErr == nil {
		return Decision{Token: TokenRestricted}
	}
	return Decision{Token: TokenCurrent, Reason: restrictedErr.Error()}
}

// String describes the token for the backend's version line.
func (d Decision) String() string {
	if d.Token == TokenRestricted {
		return "write-restricted token"
	}
	return "current token (fallback: " + d.Reason + ")"
}

// tokenRecipe is the restricted token, described. The logon SID
// and the user's own SID are only known at run time, inside the runner.
type tokenRecipe struct {
	// Flags for CreateRestrictedToken.
	Flags uint32
	// DisableSIDs become deny-only (ignored when the token lacks them): an
	// elevated cordon's command gets no administrator rights.
	DisableSIDs []string
	// RestrictingSIDs: the grant SIDs of the policy's writable roots, the
	// runner's object SID, and Everyone (the null device, the console and
	// other objects meant for everyone grant write to it).
	RestrictingSIDs []string
	// AddLogonSID adds the logon session's SID as a restricting SID:
	// user32 needs write access to the window station and desktop, whose
	// DACLs grant it to the logon session.
	AddLogonSID bool
	// DefaultDACL is who may open what the command creates without an
	// inheritable parent DACL (pipes, events, its child processes): the
	// user, SYSTEM and the object SID. Without the object SID a confined
	// process could not write to the pipes it makes for its own children.
	DefaultDACLSIDs []string
	DefaultDACLUser bool
}

// recipeFor is the recipe for a runner's grant SIDs.
func recipeFor(grantSIDs []string, objectSID string) tokenRecipe {
	restricting := append(slices.Clone(grantSIDs), objectSID, sidEveryone)
	return tokenRecipe{
		Flags:           disableMaxPrivilege | luaToken | writeRestricted,
		DisableSIDs:     []string{sidAdministrators, sidLocalAdmin},
		RestrictingSIDs: restricting,
		AddLogonSID:     true,
		DefaultDACLSIDs: []string{sidLocalSystem, objectSID},
		DefaultDACLUser: true,
	}
}
