package sandbox

import "strings"

// ReadDenyEntry is one place, relative to the home directory, that no
// confined command and no file tool may read, with the tool whose secret
// it holds. A trailing "/" marks a directory.
type ReadDenyEntry struct {
	Path string
	Tool string
}

// ReadDenyEntries is the read-deny list of the home directory, as data:
// adding a tool is one line here (TestReadDenyEntryUnreadable plants each
// entry and proves a confined command cannot print it, and the README
// names every one). Beside them, cordon's state directory and
// extra_read_deny are denied too.
var ReadDenyEntries = []ReadDenyEntry{
	// Credentials of the human's tools.
	{".ssh/", "OpenSSH"},
	{".aws/", "AWS CLI"},
	{".gnupg/", "GnuPG"},
	{".kube/", "kubectl"},
	{".docker/", "Docker"},
	{".config/gh/", "GitHub CLI"},
	{".config/gcloud/", "Google Cloud CLI"},
	{".gcp/", "Google Cloud"},
	{".azure/", "Azure CLI"},
	{".netrc", "netrc (curl, git, ftp)"},
	{".git-credentials", "git credential-store"},
	{".npmrc", "npm"},
	{".pypirc", "PyPI (twine)"},
	{".cargo/credentials.toml", "Cargo"},
	{".cargo/credentials", "Cargo (before 1.46)"},
	{".gem/credentials", "RubyGems"},
	{".vault-token", "HashiCorp Vault"},
	{".terraform.d/credentials.tfrc.json", "Terraform"},
	{".config/rclone/rclone.conf", "rclone"},
	{".pgpass", "PostgreSQL"},
	{".my.cnf", "MySQL"},
	{".s3cfg", "s3cmd"},
	{".m2/settings.xml", "Maven"},
	{".config/op/", "1Password CLI"},
	// The agents' own credential stores.
	{".claude/.credentials.json", "Claude Code"},
	{".codex/auth.json", "Codex"},
	{".codex/.credentials.json", "Codex (MCP OAuth tokens)"},
	{".gemini/oauth_creds.json", "Gemini CLI"},
	{".gemini/mcp-oauth-tokens.json", "Gemini CLI (MCP OAuth tokens)"},
	{".qwen/oauth_creds.json", "Qwen Code"},
	{".local/share/opencode/auth.json", "opencode"},
	{".local/share/opencode/mcp-auth.json", "opencode (MCP OAuth tokens)"},
	{".config/github-copilot/", "GitHub Copilot"},
	{".config/cursor/auth.json", "Cursor CLI"},
	// MCP clients' server lists with their HTTP headers: cordon's bearer
	// token can sit there, and a command that read it could connect as a
	// client of cordon and answer its own approval requests.
	{".claude.json", "Claude Code (MCP servers)"},
	{".cursor/mcp.json", "Cursor (MCP servers)"},
	{".codex/config.toml", "Codex (MCP servers)"},
	{".gemini/settings.json", "Gemini CLI (MCP servers)"},
	{".config/Code/User/mcp.json", "VS Code (MCP servers)"},
	{".config/Code/User/settings.json", "VS Code (MCP servers)"},
	{".config/Claude/claude_desktop_config.json", "Claude Desktop (MCP servers)"},
	{".codeium/windsurf/mcp_config.json", "Windsurf (MCP servers)"},
	{"Library/Application Support/Claude/claude_desktop_config.json", "Claude Desktop on macOS (MCP servers)"},
	{"Library/Application Support/Code/User/mcp.json", "VS Code on macOS (MCP servers)"},
	{"Library/Application Support/Code/User/settings.json", "VS Code on macOS (MCP servers)"},
}

// DefaultReadDeny lists ReadDenyEntries' paths, relative to the home
// directory.
var DefaultReadDeny = func() []string {
	out := make([]string, 0, len(ReadDenyEntries))
	for _, e := range ReadDenyEntries {
		out = append(out, strings.TrimSuffix(e.Path, "/"))
	}
	return out
}()
