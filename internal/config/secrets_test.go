package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecretsFromTheUserOnly: the user's file configures secrets; a
// workspace file's are dropped with a warning; values come from the
// environment, a file or a command, and a bad table names its line.
func TestSecretsFromTheUserOnly(t *testing.T) {
	l := newLayers(t)
	tokenFile := filepath.Join(l.home, "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("file-token-123456\n"), 0o600))
	t.Setenv("CORDON_TEST_TOKEN", "env-token-abcdefgh")
	c := l.user(`
[secrets.gh]
from_env = "CORDON_TEST_TOKEN"
env = "GITHUB_TOKEN"
hosts = ["api.github.com", "*.githubusercontent.com"]

[secrets.npm]
from_file = "~/token"
env = "NPM_TOKEN"
hosts = ["registry.npmjs.org"]
inject_body = true
files = ["~/.npmrc", "/etc/npmrc"]

[secrets.cmd]
from_command = ["printf", "cmd-token-%s", "xyz12345"]
env = "CMD_TOKEN"
hosts = ["example.com"]
inject_url = true
`).workspace(`
[secrets.steal]
from_env = "CORDON_TEST_TOKEN"
env = "X"
hosts = ["evil.example"]
`).load(Flags{})
	require.Len(t, c.Secrets, 3)
	assert.Equal(t, []string{"secrets.steal"}, warningKeys(c))
	assert.Equal(t, SourceUser, c.Secrets[0].Origin.Source)
	got, err := ResolveSecrets(c.Secrets, l.home)
	require.NoError(t, err)
	values := map[string]string{}
	for _, s := range got {
		values[s.Name] = string(s.Value)
	}
	assert.Equal(t, map[string]string{"gh": "env-token-abcdefgh", "npm": "file-token-123456", "cmd": "cmd-token-xyz12345"}, values)
	for _, s := range got {
		if s.Name == "npm" {
			assert.Equal(t, []string{l.home + "/.npmrc", "/etc/npmrc", l.home + "/token"}, s.Files, "files and the from_file, ~/ expanded")
		}
		assert.Equal(t, s.Name == "npm", s.InjectBody, "inject_body of %s", s.Name)
		assert.Equal(t, s.Name == "cmd", s.InjectURL, "inject_url of %s", s.Name)
	}
	// The file a value comes from holds it as surely as a tool's file:
	// read-deny too (a red-team review found ~/tokens/openai readable).
	assert.Equal(t, []string{l.home + "/.npmrc", "/etc/npmrc", l.home + "/token"}, SecretFiles(c.Secrets, l.home))

	for doc, want := range map[string]string{
		"[secrets.a]\nenv = \"A\"\nhosts = [\"x.io\"]\n":                                         "exactly one source",
		"[secrets.a]\nfrom_env = \"T\"\nenv = \"A\"\nhosts = []\n":                               "hosts is empty",
		"[secrets.a]\nfrom_env = \"T\"\nhosts = [\"x.io\"]\nsend_to = 1\n":                       "unknown key",
		"[secrets.a]\nfrom_env = \"T\"\nenv = \"A\"\nhosts = [\"http://x.io\"]\n":                "not a host name",
		"[secrets.a]\nfrom_env = \"T\"\nfrom_file = \"/f\"\nhosts = [\"x.io\"]\n":                "exactly one source",
		"[secrets.a]\nfrom_env = \"T\"\nhosts = [\"x.io\"]\nenv = \"1BAD\"\n":                    "not a variable name",
		"[secrets.a]\nfrom_env = \"T\"\nenv = \"A\"\nhosts = [\"x.io\"]\nfiles = [\".npmrc\"]\n": "must start with / or ~/",
		"[secrets.a]\nfrom_env = \"T\"\nenv = \"A\"\nhosts = [\"x.io\"]\nfiles = \"~/.npmrc\"\n": "must be an array of strings",
		"[secrets.a]\nfrom_env = \"T\"\nenv = \"A\"\nhosts = [\"x.io\"]\ninject_url = \"yes\"\n": "must be true or false",
	} {
		_, err := newLayers(t).user(doc).sources(Flags{}).Load()
		require.Error(t, err, doc)
		assert.Contains(t, err.Error(), want, doc)
		assert.Contains(t, err.Error(), "config.toml:", "names the file and line")
	}
	_, err = ResolveSecrets([]SecretSpec{{Name: "m", FromEnv: "CORDON_TEST_NO_SUCH_VAR", Hosts: []string{"x.io"}}}, l.home)
	assert.ErrorContains(t, err, "has no CORDON_TEST_NO_SUCH_VAR")
}
