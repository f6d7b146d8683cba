package helper

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnconfinedOnlyBeneathAReaper: --unconfined only ever drops the
// confinement a reaper would start; with anything that confines, or
// without a reaper, the helper refuses to start (fail closed).
func TestUnconfinedOnlyBeneathAReaper(t *testing.T) {
	cfg, err := Parse(Config{ReapFD: 4, StatusFD: 3, Unconfined: true, Argv: []string{"true"}}.Args())
	require.NoError(t, err)
	assert.True(t, cfg.Unconfined)
	for name, c := range map[string]Config{
		"no reaper": {StatusFD: 3, Unconfined: true, Argv: []string{"true"}},
		"landlock":  {ReapFD: 4, LandlockABI: 6, Unconfined: true, Argv: []string{"true"}},
		"zygote":    {ReapFD: 4, StatusFD: 3, Zygote: true, Unconfined: true},
	} {
		_, err := Parse(c.Args())
		assert.ErrorContains(t, err, "--unconfined", name)
	}
}
