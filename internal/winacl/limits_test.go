package winacl

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLimitsAndFallback(t *testing.T) {
	restricted := decide(nil)
	assert.Equal(t, TokenRestricted, restricted.Token)
	un := Limits(restricted)
	joined := strings.Join(un, "\n")
	for _, want := range []string{"read-deny list", "network deny", "do not exist yet", "Everyone", "isolation"} {
		assert.Contains(t, joined, want)
	}
	assert.NotContains(t, joined, "writes outside the writable roots")

	fallback := decide(errors.New("CreateRestrictedToken: Access is denied."))
	assert.Equal(t, TokenCurrent, fallback.Token)
	un = Limits(fallback)
	require.NotEmpty(t, un)
	assert.Contains(t, un[0], "writes outside the writable roots: NOT enforced", "the worst gap comes first")
	assert.Contains(t, un[0], "CreateRestrictedToken: Access is denied.", "with the reason")
	assert.Contains(t, fallback.String(), "fallback")
}
