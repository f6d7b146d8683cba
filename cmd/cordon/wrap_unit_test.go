package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWrapName(t *testing.T) {
	for argv, want := range map[string][]string{
		"modelcontextprotocol-server-github": {"npx", "-y", "@modelcontextprotocol/server-github"},
		"mcp-server-fetch":                   {"uvx", "mcp-server-fetch@2.1"},
		"my-server":                          {"/opt/bin/my-server", "--port", "1"},
		"npx":                                {"npx", "-y"},
	} {
		assert.Equal(t, argv, wrapName(want), "%v", want)
	}
}

// TestWrapEnv: the client's environment, cordon's own variables out, the
// runners' caches in the class directory.
func TestWrapEnv(t *testing.T) {
	env := wrapEnv([]string{"GITHUB_TOKEN=t", "CORDON_HTTP_TOKEN=secret", "PATH=/bin"}, "/s/wrap/x")
	assert.Contains(t, env, "GITHUB_TOKEN=t")
	assert.Contains(t, env, "PATH=/bin")
	assert.NotContains(t, env, "CORDON_HTTP_TOKEN=secret")
	assert.Contains(t, env, "npm_config_cache="+filepath.Join("/s/wrap/x", "npm"))
	assert.Contains(t, env, "UV_CACHE_DIR=/s/wrap/x/uv")
}
