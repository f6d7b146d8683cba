package winacl

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTokenRecipe(t *testing.T) {
	grants := []string{grantSID(`C:\ws`), grantSID(`C:\tmp\s1`)}
	obj := sidObjectPrefix + "1-2-3-4"
	r := recipeFor(grants, obj)
	assert.Equal(t, uint32(0x1|0x4|0x8), r.Flags, "DISABLE_MAX_PRIVILEGE | LUA_TOKEN | WRITE_RESTRICTED")
	assert.Equal(t, []string{grants[0], grants[1], obj, sidEveryone}, r.RestrictingSIDs)
	assert.True(t, r.AddLogonSID)
	assert.Contains(t, r.DisableSIDs, "S-1-5-32-544", "no administrator rights, even from an elevated cordon")
	assert.Equal(t, []string{sidLocalSystem, obj}, r.DefaultDACLSIDs)
	assert.True(t, r.DefaultDACLUser)
	assert.Len(t, grants, 2, "the caller's slice is not appended to")

	ro := recipeFor(nil, obj)
	assert.Equal(t, []string{obj, sidEveryone}, ro.RestrictingSIDs, "no grant SID: writes only where Everyone may")
}
