//go:build unix

package secrets

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecretMaskedFile: every occurrence of every value becomes its
// sentinel (a value that holds another whole), the rest of the file stays
// as it is, a file without a value is the file as is, and what cannot be
// masked safely (a FIFO, a file over 1 MiB) is an error, never content.
func TestSecretMaskedFile(t *testing.T) {
	v, err := New([]Secret{
		{Name: "short", Value: []byte("tok-12345678"), Hosts: []string{"a.example"}, Env: "A"},
		{Name: "long", Value: []byte("tok-12345678-and-more"), Hosts: []string{"b.example"}, Env: "B"},
	})
	require.NoError(t, err)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	got, err := v.MaskedFile(write("hosts.yml", "a: tok-12345678\nb: tok-12345678-and-more\nc: tok-12345678\n"))
	require.NoError(t, err)
	assert.Equal(t, "a: "+v.Sentinel("short")+"\nb: "+v.Sentinel("long")+"\nc: "+v.Sentinel("short")+"\n", string(got))

	// A file holding none of the values (rotated since, or led elsewhere)
	// holds a credential cordon does not know: hidden, never shown.
	_, err = v.MaskedFile(write("plain", "oauth_token: gho_ROTATED\n"))
	assert.ErrorContains(t, err, "holds none of the secrets' values")

	_, err = v.MaskedFile(write("big", strings.Repeat("x", maxFileSize+1)))
	assert.ErrorContains(t, err, "larger than")

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	_, err = v.MaskedFile(fifo)
	assert.ErrorContains(t, err, "not a regular file")

	assert.Equal(t, []string(nil), v.Files())
}

// TestSecretMaskedFileEveryForm: a credential file that holds the value
// percent-encoded (git's credential store writes it so) shows the
// sentinel in its place, and no form of the value survives.
func TestSecretMaskedFileEveryForm(t *testing.T) {
	const value = "ghp_a+b/c=d0123456789"
	v, err := New([]Secret{{Name: "gh", Value: []byte(value), Hosts: []string{"github.com"}, Env: "GH_TOKEN"}})
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), ".git-credentials")
	require.NoError(t, os.WriteFile(p, []byte("https://octo:ghp_a%2Bb%2Fc%3Dd0123456789@github.com\nhttps://octo:"+value+"@example.com\n"), 0o600))
	got, err := v.MaskedFile(p)
	require.NoError(t, err)
	assert.Equal(t, "https://octo:"+v.Sentinel("gh")+"@github.com\nhttps://octo:"+v.Sentinel("gh")+"@example.com\n", string(got))
	for _, f := range forms([]byte(value)) {
		assert.NotContains(t, string(got), string(f))
		assert.True(t, v.Holds("x"+string(f)+"y"), "Holds sees %q", f)
	}
}
