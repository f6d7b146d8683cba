package config

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRedteamFromFileIsReadDenied: a secret read from_file leaves the file
// it came from off the read-deny list (only `files` join it), so a
// command, or read_file, reads the real value there whenever the path is
// not already on the default list (from_file = "~/tokens/openai"). The
// list the sandbox gets, config.SecretFiles, must name it.
func TestRedteamFromFileIsReadDenied(t *testing.T) {
	home := t.TempDir()
	specs := []SecretSpec{{Name: "openai", FromFile: "~/tokens/openai", Env: "OPENAI_API_KEY", Hosts: []string{"api.openai.com"}}}
	assert.Contains(t, SecretFiles(specs, home), filepath.Join(home, "tokens/openai"),
		"the file holding the value is not on the read-deny list")
}
