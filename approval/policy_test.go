package approval

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePolicy(t *testing.T) {
	for _, name := range []string{"never", "on-request", "ask-dangerous", "always"} {
		p, err := ParsePolicy(name)
		require.NoError(t, err)
		assert.Equal(t, name, p.String())
		assert.True(t, p.Valid())
	}
	for _, bad := range []string{"", "Never", "ask", "on_request", " always"} {
		_, err := ParsePolicy(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "use one of never, on-request, ask-dangerous, always")
	}
}

func TestPolicyStricterThan(t *testing.T) {
	assert.True(t, Always.StricterThan(AskDangerous))
	assert.True(t, AskDangerous.StricterThan(OnRequest))
	assert.True(t, OnRequest.StricterThan(Never))
	assert.False(t, Never.StricterThan(Always))
	assert.False(t, AskDangerous.StricterThan(AskDangerous))
	assert.False(t, Policy("bogus").StricterThan(Never))
	assert.False(t, Always.StricterThan(""))
}
