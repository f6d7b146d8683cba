package tools

import (
	"net/url"
	"testing"

	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/stretchr/testify/assert"
)

// TestRedteamEnvScrubMissesEncodedValue: under network allow or deny the
// environment is scrubbed for the raw value only, while the restricted
// scrub (Vault.Holds) knows its URL forms too: a passed-through variable
// that holds the value percent-encoded (a connection URL's password, an
// AWS-style key with '/' or '+') reaches the command, and decodes to the
// value.
func TestRedteamEnvScrubMissesEncodedValue(t *testing.T) {
	const value = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	list := []secrets.Secret{{Name: "aws", Value: []byte(value), Hosts: []string{"s3.amazonaws.com"}, Env: "AWS_SECRET_ACCESS_KEY"}}
	env := withoutSecretValues([]string{"STORE_URL=https://AKIA:" + url.QueryEscape(value) + "@bucket.example/", "PATH=/usr/bin"}, list)
	assert.Equal(t, []string{"PATH=/usr/bin"}, env, "a variable holding the value percent-encoded passed")
}
