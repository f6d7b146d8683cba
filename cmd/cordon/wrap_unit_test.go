package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWrapName(t *testing.T) {
	for _, c := range []struct {
		want string
		argv []string
	}{
		{"modelcontextprotocol-server-github", []string{"npx", "-y", "@modelcontextprotocol/server-github"}},
		{"mcp-server-fetch", []string{"uvx", "mcp-server-fetch@2.1"}},
		{"my-server", []string{"/opt/bin/my-server", "--port", "1"}},
		{"a", []string{"node", "a.js"}},
		{"b", []string{"node", "b.js"}},
		{"b", []string{"/usr/bin/node", "--require", "x.js", "/srv/b.js", "--flag"}},
		{"github-index", []string{"node", "/opt/mcp/github/dist/index.js"}},
		{"tiny-server", []string{"npx", "-y", "--package=file:/t/tiny.tgz", "tiny-server"}},
		{"scope-pkg", []string{"npx", "-p", "other", "@scope/pkg@1.2.3"}},
		{"mcp_server_fetch", []string{"python3", "-m", "mcp_server_fetch"}},
		{"mcp_server_git", []string{"python3.12", "-X", "utf8", "-mmcp_server_git"}},
		{"server_tool", []string{"python", "-u", "/x/server_tool.py"}},
		{"mcp-server-git", []string{"uvx", "--from", "git+https://e.test/r", "mcp-server-git"}},
		{"scope-server", []string{"npm", "exec", "@scope/server"}},
		{"tool", []string{"uv", "run", "tool.py"}},
		{"deno-srv", []string{"deno", "run", "-A", "deno-srv.ts"}},
		{"a", []string{"env", "-i", "X=1", "node", "a.js"}},
		{"c", []string{"sh", "c.sh"}},
	} {
		assert.Equal(t, c.want, wrapName(c.argv), "%v", c.argv)
	}
	// With no script or package named, the argv tells programs apart.
	e1, e2 := wrapName([]string{"node", "-e", "a()"}), wrapName([]string{"node", "-e", "b()"})
	assert.NotEqual(t, e1, e2)
	assert.Regexp(t, `^node-[0-9a-f]{8}$`, e1)
	assert.Equal(t, e1, wrapName([]string{"node", "-e", "a()"}), "stable across starts")
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
