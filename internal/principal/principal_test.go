package principal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddListRevoke(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state dir", FileName)
	tok, err := Add(path, "alice", "")
	require.NoError(t, err)
	_, err = Add(path, "bob", "/srv/ws with space")
	require.NoError(t, err)
	_, err = Add(path, "alice", "")
	assert.ErrorContains(t, err, "exists")

	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	raw, _ := os.ReadFile(path)
	assert.NotContains(t, string(raw), tok, "only the digest is kept")

	list, err := Load(path)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.True(t, list[0].Matches(tok))
	assert.False(t, list[1].Matches(tok))
	assert.Equal(t, "/srv/ws with space", list[1].Workspace)

	require.NoError(t, Revoke(path, "alice"))
	list, err = Load(path)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "bob", list[0].Name)
	assert.Error(t, Revoke(path, "alice"))
}

func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(mode os.FileMode, text string) string {
		p := filepath.Join(dir, "f")
		os.Remove(p)
		require.NoError(t, os.WriteFile(p, []byte(text), mode))
		require.NoError(t, os.Chmod(p, mode))
		return p
	}
	good := "ci 0123456789abcdef0123 /srv/ci\n# comment\n\n"
	list, err := Load(write(0o600, good))
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.True(t, list[0].Matches("0123456789abcdef0123"), "a plain token works too")

	for text, want := range map[string]string{
		"ci 0123456789abcdef0123\n":        "lets others read it",
		"ci\n":                             "has no token",
		"ci short\n":                       "too easy to guess",
		"ci sha256:abcd\n":                 "64 hex digits",
		"../x 0123456789abcdef0123\n":      "principal name",
		"ci 0123456789abcdef0123 rel/ws\n": "absolute",
		"ci 0123456789abcdef0123\nci 0123456789abcdef0124\n": "named twice",
	} {
		mode := os.FileMode(0o600)
		if want == "lets others read it" {
			mode = 0o644
		}
		_, err := Load(write(mode, text))
		require.Error(t, err, text)
		assert.True(t, strings.Contains(err.Error(), want), "%q: %v", text, err)
	}
	list, err = Load(filepath.Join(dir, "missing"))
	assert.NoError(t, err)
	assert.Empty(t, list)
}
