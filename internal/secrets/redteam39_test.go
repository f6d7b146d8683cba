//go:build unix

package secrets

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedteamMaskedCopyShowsOtherCredentials: naming ~/.git-credentials
// (on the default read-deny list, never readable before) in one secret's
// files makes its masked copy show every other credential in it whole —
// here a GitLab token the human never configured as a secret.
func TestRedteamMaskedCopyShowsOtherCredentials(t *testing.T) {
	const github, gitlab = "ghp_githubToken0123456789", "glpat-otherTokenNeverConfigured"
	v, err := New([]Secret{{Name: "gh", Value: []byte(github), Hosts: []string{"github.com"}, Env: "GH_TOKEN"}})
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), ".git-credentials")
	require.NoError(t, os.WriteFile(p, []byte("https://octo:"+github+"@github.com\nhttps://octo:"+gitlab+"@gitlab.com\n"), 0o600))
	got, err := v.MaskedFile(p)
	if err != nil {
		return // hidden: nothing shown
	}
	assert.NotContains(t, string(got), gitlab, "another credential in the secret's file is shown whole")
}
