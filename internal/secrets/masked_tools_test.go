//go:build unix

package secrets

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Holes a second red-team review of the masked copies found.

// TestSecretMaskedFileKeepsWhatTheToolReads: the text a tool finds its
// credential by — a GitLab npm registry's key, git's x-access-token user,
// a .env variable's name — stays whole beside the sentinel; starred, the
// tool found no credential and sent no sentinel at all.
func TestSecretMaskedFileKeepsWhatTheToolReads(t *testing.T) {
	const value = "glpat-AbCdEf0123456789xyz"
	v, err := New([]Secret{{Name: "tok", Value: []byte(value), Hosts: []string{"gitlab.com"}, Env: "TOK"}})
	require.NoError(t, err)
	sent := v.Sentinel("tok")
	for name, line := range map[string]string{
		// GitLab's documented .npmrc line for its npm registry.
		".npmrc": "//gitlab.com/api/v4/projects/123/packages/npm/:_authToken=%s\n",
		// The user name GitHub's and GitLab's tokens take in git's store.
		".git-credentials": "https://x-access-token:%s@gitlab.com\n",
		".env":             "ANTHROPIC_API_KEY=%s\n",
	} {
		p := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(p, []byte(fmtLine(line, value)), 0o600))
		got, err := v.MaskedFile(p)
		require.NoError(t, err)
		assert.Equal(t, fmtLine(line, sent), string(got), "%s: the copy no longer reads as the tool's file", name)
	}
}

// TestSecretMaskedFileStarsPercentEncodedCredentials: git's store writes
// a password percent-encoded; another credential with '/' or '+' (an AWS
// or Azure key) is starred whole, not cut by %2F and %2B into runs short
// enough to show.
func TestSecretMaskedFileStarsPercentEncodedCredentials(t *testing.T) {
	const github = "ghp_githubToken0123456789"
	const aws = "wJalrXUtnFEMI%2FK7MDENG%2FbPxRfiCYEXAMPLEKEY" // wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
	v, err := New([]Secret{{Name: "gh", Value: []byte(github), Hosts: []string{"github.com"}, Env: "GH_TOKEN"}})
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), ".git-credentials")
	require.NoError(t, os.WriteFile(p, []byte("https://octo:"+github+"@github.com\nhttps://AKIAIOSFODNN7EXAMPLE:"+aws+"@git-codecommit.us-east-1.amazonaws.com\n"), 0o600))
	got, err := v.MaskedFile(p)
	require.NoError(t, err)
	for _, piece := range regexp.MustCompile(`[A-Za-z0-9]{8,}`).FindAllString("wJalrXUtnFEMI K7MDENG bPxRfiCYEXAMPLEKEY", -1) {
		assert.NotContains(t, string(got), piece, "a piece of another credential shows in the copy: %s", got)
	}
}

func fmtLine(line, token string) string { return strings.ReplaceAll(line, "%s", token) }
