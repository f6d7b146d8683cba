package tools

import (
	"net/url"
	"testing"

	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/stretchr/testify/assert"
)

// TestEnvScrubKnowsEveryFormOfTheValue: under network allow or deny, as
// under restricted, a passed-through variable that holds the value in
// any of its forms is dropped — percent-encoded in a connection URL's
// password too (a red-team review found it passed).
func TestEnvScrubKnowsEveryFormOfTheValue(t *testing.T) {
	const value = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	list := []secrets.Secret{{Name: "aws", Value: []byte(value), Hosts: []string{"s3.amazonaws.com"}, Env: "AWS_SECRET_ACCESS_KEY"}}
	env := withoutSecretValues([]string{"STORE_URL=https://AKIA:" + url.QueryEscape(value) + "@bucket.example/", "PATH=/usr/bin"}, list)
	assert.Equal(t, []string{"PATH=/usr/bin"}, env, "a variable holding the value percent-encoded passed")
}
