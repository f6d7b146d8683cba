//go:build unix

package secrets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecretMaskedFileStarsOtherCredentials: a file named for one secret
// (~/.git-credentials, never readable before) shows, in its masked copy,
// no other credential it holds — here a GitLab token the human never
// configured as a secret is starred out (a red-team review found it
// shown whole), while the sentinel and the text around it stay.
func TestSecretMaskedFileStarsOtherCredentials(t *testing.T) {
	const github, gitlab = "ghp_githubToken0123456789", "glpat-otherTokenNeverConfigured"
	v, err := New([]Secret{{Name: "gh", Value: []byte(github), Hosts: []string{"github.com"}, Env: "GH_TOKEN"}})
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), ".git-credentials")
	require.NoError(t, os.WriteFile(p, []byte("https://octo:"+github+"@github.com\nhttps://octo:"+gitlab+"@gitlab.com\n"), 0o600))
	got, err := v.MaskedFile(p)
	require.NoError(t, err)
	assert.Equal(t, "https://octo:"+v.Sentinel("gh")+"@github.com\nhttps://octo:"+strings.Repeat("*", len(gitlab))+"@gitlab.com\n", string(got))
}
