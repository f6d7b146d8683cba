package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeTestFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	}
}

func readJSONFile(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(b, &v), "%s", b)
	return v
}

func noEnv(string) string { return "" }

// TestSeedAgentHomesStripsPrograms: the private homes hold the human's
// config without anything that names a program, the agent's own state
// over the human's, and the human's credentials.
func TestSeedAgentHomesStripsPrograms(t *testing.T) {
	home, classDir := t.TempDir(), t.TempDir()
	writeTestFiles(t, home, map[string]string{
		".claude/settings.json": `{"permissions":{"allow":["Bash(make:*)"]},"model":"opus",
			"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"evil"}]}]},
			"statusLine":{"type":"command","command":"evil"},"apiKeyHelper":"evil","otelHeadersHelper":"evil",
			"enabledPlugins":{"x@y":true},"env":{"FOO":"bar","CLAUDE_CONFIG_DIR":"/h/.claude","NODE_OPTIONS":"--require evil"}}`,
		".claude/CLAUDE.md":         "be brief\n",
		".claude/.credentials.json": `{"claudeAiOauth":{"accessToken":"human"}}`,
		".claude.json": `{"oauthAccount":{"emailAddress":"h@e.test"},"numStartups":1,
			"mcpServers":{"s":{"command":"evil"}},"projects":{"/p":{"allowedTools":[],"mcpServers":{"t":{"command":"evil"}}}}}`,
		".codex/config.toml": `model = "gpt-5.5"
notify = ["evil"]
[mcp_servers.s]
command = "evil"
[profiles.fast]
model = "gpt-5.5-mini"
notify = ["evil"]
[model_providers.p]
base_url = "http://x.test"
[model_providers.p.auth]
command = "evil"
`,
		".codex/auth.json": `{"OPENAI_API_KEY":"k"}`,
		".codex/AGENTS.md": "agents\n",
	})
	// What the agent left from a previous run: its state, a hook file,
	// local settings, programs in its own .claude.json and config.toml.
	writeTestFiles(t, classDir, map[string]string{
		"claude/.claude.json":        `{"numStartups":7,"mcpServers":{"planted":{"command":"evil"}}}`,
		"claude/settings.local.json": `{"hooks":{}}`,
		"claude/projects/p/s.jsonl":  "{}\n",
		"codex/hooks.json":           `{}`,
		"codex/config.toml":          "[mcp_servers.planted]\ncommand = \"evil\"\n",
		"codex/history.jsonl":        "{}\n",
	})
	env, err := seedAgentHomes(classDir, home, noEnv)
	require.NoError(t, err)
	assert.Equal(t, []string{"CLAUDE_CONFIG_DIR=" + filepath.Join(classDir, "claude"), "CODEX_HOME=" + filepath.Join(classDir, "codex"),
		"GEMINI_CLI_HOME=" + filepath.Join(classDir, "gemini")}, env)

	settings := readJSONFile(t, filepath.Join(classDir, "claude", "settings.json"))
	assert.Equal(t, map[string]any{"permissions": map[string]any{"allow": []any{"Bash(make:*)"}}, "model": "opus",
		"env": map[string]any{"FOO": "bar"}}, settings)
	global := readJSONFile(t, filepath.Join(classDir, "claude", ".claude.json"))
	assert.Equal(t, map[string]any{"oauthAccount": map[string]any{"emailAddress": "h@e.test"}, "numStartups": 7.0,
		"projects": map[string]any{"/p": map[string]any{"allowedTools": []any{}}}}, global, "the agent's state over the human's, no servers")
	creds, err := os.ReadFile(filepath.Join(classDir, "claude", ".credentials.json"))
	require.NoError(t, err)
	assert.Contains(t, string(creds), "human")
	assert.NoFileExists(t, filepath.Join(classDir, "claude", "settings.local.json"))
	assert.FileExists(t, filepath.Join(classDir, "claude", "projects", "p", "s.jsonl"), "its sessions stay")
	assert.FileExists(t, filepath.Join(classDir, "claude", "CLAUDE.md"))

	var cfg map[string]any
	_, err = toml.DecodeFile(filepath.Join(classDir, "codex", "config.toml"), &cfg)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"model": "gpt-5.5", "profiles": map[string]any{"fast": map[string]any{"model": "gpt-5.5-mini"}},
		"model_providers": map[string]any{"p": map[string]any{"base_url": "http://x.test", "auth": map[string]any{}}}}, cfg)
	assert.NoFileExists(t, filepath.Join(classDir, "codex", "hooks.json"))
	assert.FileExists(t, filepath.Join(classDir, "codex", "history.jsonl"), "its history stays")
	assert.FileExists(t, filepath.Join(classDir, "codex", "auth.json"))
	assert.FileExists(t, filepath.Join(classDir, "codex", "AGENTS.md"))
}

// TestSeedGeminiHome: Gemini CLI, pointed at $GEMINI_CLI_HOME/.gemini,
// gets the human's settings without anything that names a program, the
// human's login, and none of what it left to act on its next run
// (settings with hooks, extensions, commands, policies, .env files); its
// own history stays. Its config directory, a protected name, is a
// writable root of its own.
func TestSeedGeminiHome(t *testing.T) {
	home, classDir := t.TempDir(), t.TempDir()
	writeTestFiles(t, home, map[string]string{
		".gemini/settings.json": `{"security":{"auth":{"selectedType":"oauth-personal"}},"model":{"name":"gemini-2.5-pro"},
			"mcpServers":{"s":{"command":"evil"}},"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"evil"}]}]},
			"tools":{"discoveryCommand":"evil","callCommand":"evil","sandbox":"evil","shell":{"pager":"evil"}},
			"mcp":{"serverCommand":"evil","allowed":["a"]},"general":{"preferredEditor":"vim","vimMode":true},
			"toolDiscoveryCommand":"evil"}`,
		".gemini/oauth_creds.json":                   `{"access_token":"human"}`,
		".gemini/google_accounts.json":               `{"active":"h@e.test"}`,
		".gemini/GEMINI.md":                          "be brief\n",
		".gemini/extensions/x/gemini-extension.json": `{"mcpServers":{"x":{"command":"evil"}}}`,
		".gemini/commands/c.toml":                    "prompt = \"!{evil}\"\n",
	})
	writeTestFiles(t, classDir, map[string]string{
		"gemini/.gemini/settings.json":                      `{"hooks":{"BeforeTool":[]}}`,
		"gemini/.gemini/extensions/y/gemini-extension.json": `{"mcpServers":{"y":{"command":"evil"}}}`,
		"gemini/.gemini/commands/d.toml":                    "prompt = \"!{evil}\"\n",
		"gemini/.gemini/policies/p.toml":                    "[[rule]]\ndecision = \"allow\"\n",
		"gemini/.gemini/.env":                               "NODE_OPTIONS=--require evil\n",
		"gemini/.env":                                       "NODE_OPTIONS=--require evil\n",
		"gemini/.gemini/tmp/h/logs.json":                    "[]\n",
	})
	env, err := seedAgentHomes(classDir, home, noEnv)
	require.NoError(t, err)
	assert.Contains(t, env, "GEMINI_CLI_HOME="+filepath.Join(classDir, "gemini"))
	private := filepath.Join(classDir, "gemini", ".gemini")
	assert.Equal(t, map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "oauth-personal"}},
		"model": map[string]any{"name": "gemini-2.5-pro"}, "tools": map[string]any{"shell": map[string]any{}},
		"mcp": map[string]any{"allowed": []any{"a"}}, "general": map[string]any{"vimMode": true}},
		readJSONFile(t, filepath.Join(private, "settings.json")))
	assert.Equal(t, `{"access_token":"human"}`, readFileString(t, filepath.Join(private, "oauth_creds.json")))
	assert.FileExists(t, filepath.Join(private, "google_accounts.json"))
	assert.FileExists(t, filepath.Join(private, "GEMINI.md"))
	for _, gone := range []string{"extensions", "commands", "policies", ".env", "../.env"} {
		assert.NoFileExists(t, filepath.Join(private, gone))
		assert.NoDirExists(t, filepath.Join(private, gone))
	}
	assert.FileExists(t, filepath.Join(private, "tmp", "h", "logs.json"), "its history stays")
	assert.Equal(t, []string{private}, agentConfigRoots(classDir))

	// A human whose GEMINI_CLI_HOME points elsewhere is seeded from there.
	other := t.TempDir()
	writeTestFiles(t, other, map[string]string{".gemini/settings.json": `{"model":{"name":"from-var"}}`})
	_, err = seedAgentHomes(classDir, home, func(k string) string {
		return map[string]string{"GEMINI_CLI_HOME": other}[k]
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"model": map[string]any{"name": "from-var"}}, readJSONFile(t, filepath.Join(private, "settings.json")))
}

// TestSeedAgentHomesAgain: a second start drops what the agent wrote into
// its settings, keeps a credential it refreshed, and takes the human's
// when that is newer; a config the human removed goes too.
func TestSeedAgentHomesAgain(t *testing.T) {
	home, classDir := t.TempDir(), t.TempDir()
	writeTestFiles(t, home, map[string]string{
		".claude/settings.json":     `{"model":"opus"}`,
		".claude/.credentials.json": `{"v":"human-1"}`,
		".codex/config.toml":        "model = \"m\"\n",
	})
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(home, ".claude/.credentials.json"), old, old))
	_, err := seedAgentHomes(classDir, home, noEnv)
	require.NoError(t, err)
	writeTestFiles(t, classDir, map[string]string{
		"claude/settings.json":     `{"hooks":{"Stop":[]}}`,
		"claude/.credentials.json": `{"v":"agent-refreshed"}`,
	})
	require.NoError(t, os.Remove(filepath.Join(home, ".codex/config.toml")))
	_, err = seedAgentHomes(classDir, home, noEnv)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"model": "opus"}, readJSONFile(t, filepath.Join(classDir, "claude", "settings.json")))
	assert.Equal(t, "agent-refreshed", readJSONFile(t, filepath.Join(classDir, "claude", ".credentials.json"))["v"])
	assert.NoFileExists(t, filepath.Join(classDir, "codex", "config.toml"))

	writeTestFiles(t, home, map[string]string{".claude/.credentials.json": `{"v":"human-2"}`})
	future := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(home, ".claude/.credentials.json"), future, future))
	_, err = seedAgentHomes(classDir, home, noEnv)
	require.NoError(t, err)
	assert.Equal(t, "human-2", readJSONFile(t, filepath.Join(classDir, "claude", ".credentials.json"))["v"], "the human logged in again")
}

// TestSeedAgentHomesFollowsTheClientsVariables: a human whose
// CLAUDE_CONFIG_DIR and CODEX_HOME point elsewhere is seeded from there.
func TestSeedAgentHomesFollowsTheClientsVariables(t *testing.T) {
	home, classDir, claudeDir, codexDir := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	writeTestFiles(t, claudeDir, map[string]string{"settings.json": `{"model":"from-var"}`, ".claude.json": `{"numStartups":3}`})
	writeTestFiles(t, codexDir, map[string]string{"config.toml": "model = \"from-var\"\n"})
	getenv := func(k string) string {
		return map[string]string{"CLAUDE_CONFIG_DIR": claudeDir, "CODEX_HOME": codexDir}[k]
	}
	_, err := seedAgentHomes(classDir, home, getenv)
	require.NoError(t, err)
	assert.Equal(t, "from-var", readJSONFile(t, filepath.Join(classDir, "claude", "settings.json"))["model"])
	assert.Equal(t, 3.0, readJSONFile(t, filepath.Join(classDir, "claude", ".claude.json"))["numStartups"])
	b, err := os.ReadFile(filepath.Join(classDir, "codex", "config.toml"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "from-var")
}

// TestSeedAgentHomesSymlinks: a symlink the agent left in its class
// directory leads cordon, which seeds unconfined, nowhere outside it: not
// to read a secret into the agent's home, not to write the human's config.
func TestSeedAgentHomesSymlinks(t *testing.T) {
	home, classDir, outside := t.TempDir(), t.TempDir(), t.TempDir()
	writeTestFiles(t, home, map[string]string{".claude/settings.json": `{"model":"opus"}`, ".codex/config.toml": "model = \"m\"\n"})
	writeTestFiles(t, outside, map[string]string{"secret.json": `{"token":"SECRET-CANARY"}`})
	require.NoError(t, os.MkdirAll(filepath.Join(classDir, "claude"), 0o700))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(classDir, "claude", ".claude.json")))
	_, err := seedAgentHomes(classDir, home, noEnv)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(classDir, "claude", ".claude.json"))
	if err == nil {
		assert.NotContains(t, string(b), "SECRET-CANARY", "the secret was not read into the agent's home")
	}
	assert.Equal(t, `{"token":"SECRET-CANARY"}`, readFileString(t, filepath.Join(outside, "secret.json")), "nor written through")

	// The whole home a link to the human's: refused, the human's untouched.
	require.NoError(t, os.RemoveAll(filepath.Join(classDir, "codex")))
	require.NoError(t, os.Symlink(filepath.Join(home, ".codex"), filepath.Join(classDir, "codex")))
	_, err = seedAgentHomes(classDir, home, noEnv)
	require.Error(t, err)
	assert.Equal(t, "model = \"m\"\n", readFileString(t, filepath.Join(home, ".codex", "config.toml")))
}

// TestSeedAgentHomesBrokenConfig: a config that cannot be parsed cannot
// be stripped: the agent does not start, and the error names the file.
func TestSeedAgentHomesBrokenConfig(t *testing.T) {
	home, classDir := t.TempDir(), t.TempDir()
	writeTestFiles(t, home, map[string]string{".claude/settings.json": `{"hooks":`})
	_, err := seedAgentHomes(classDir, home, noEnv)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(home, ".claude", "settings.json"))
	assert.NoFileExists(t, filepath.Join(classDir, "claude", "settings.json"))
}

// TestWrapEnvAgentHomes: the agent's homes replace the client's values.
func TestWrapEnvAgentHomes(t *testing.T) {
	env := wrapEnv([]string{"CLAUDE_CONFIG_DIR=/h/.claude", "CODEX_HOME=/h/.codex", "PATH=/bin"}, "/s/wrap/x",
		"CLAUDE_CONFIG_DIR=/s/wrap/x/claude", "CODEX_HOME=/s/wrap/x/codex")
	joined := strings.Join(env, "\n")
	assert.NotContains(t, joined, "/h/.claude")
	assert.NotContains(t, joined, "/h/.codex")
	assert.Contains(t, env, "CLAUDE_CONFIG_DIR=/s/wrap/x/claude")
	assert.Contains(t, env, "PATH=/bin")
}

func readFileString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
