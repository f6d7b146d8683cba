package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/BurntSushi/toml"
)

// An external_agent runs with a config home of its own beneath its class
// directory, never the human's: whatever the wrapped agent writes there
// (a hook, an MCP server, a status line) can reach neither the human's
// next unwrapped run, which loads ~/.claude, ~/.codex and ~/.gemini, nor, past this
// start, its own next run, since each start seeds it again from the
// human's config minus everything that names a program. The agent's own
// state (sessions, history, its .claude.json) stays between runs; its
// credentials are copied in, readable to it alone (the class directory is
// hidden from every other sandbox with cordon's state).

// agentHome is one agent's config home: the variable that points the
// agent at it, and how it is seeded from the human's.
type agentHome struct {
	variable string // CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME
	sub      string // beneath the class directory
	// inner is the config directory beneath the one the variable names
	// (Gemini CLI keeps $GEMINI_CLI_HOME/.gemini), else "".
	inner string
	// human is the human's config directory: what the client's
	// environment names, else the default beneath the home.
	human func(home string, getenv func(string) string) string
	seed  func(human string, private privateHome, home string) error
}

// privateHome is a config home beneath the class directory, reached only
// through a handle on that directory: the agent writes there between
// starts, and a symlink it leaves must not lead cordon, which seeds
// unconfined, to read or write anything outside.
type privateHome struct {
	root *os.Root
	dir  string // relative to root
}

func (p privateHome) path(name string) string { return filepath.Join(p.dir, name) }

var agentHomes = []agentHome{
	{variable: "CLAUDE_CONFIG_DIR", sub: "claude", human: humanClaudeDir, seed: seedClaude},
	{variable: "CODEX_HOME", sub: "codex", human: humanCodexDir, seed: seedCodex},
	{variable: "GEMINI_CLI_HOME", sub: "gemini", inner: ".gemini", human: humanGeminiDir, seed: seedGemini},
}

// agentConfigRoots are the private config directories whose name is a
// protected one (Gemini CLI's .gemini): each is made a writable root of
// its own, or the sandbox would keep the agent's own config read-only and
// set aside what it writes there.
func agentConfigRoots(classDir string) []string {
	var roots []string
	for _, h := range agentHomes {
		if h.inner != "" {
			roots = append(roots, filepath.Join(classDir, h.sub, h.inner))
		}
	}
	return roots
}

// claudeProgramKeys name programs Claude Code runs, or servers it starts,
// wherever they appear in settings.json or .claude.json (projects carry
// their own mcpServers).
var claudeProgramKeys = []string{
	"hooks", "mcpServers", "statusLine", "apiKeyHelper", "awsAuthRefresh", "awsCredentialExport",
	"gcpAuthRefresh", "otelHeadersHelper", "fileSuggestion", "enabledPlugins", "extraKnownMarketplaces",
	"plugins", "enabledMcpjsonServers", "enableAllProjectMcpServers",
}

// claudeProgramEnv are variables of settings.json's env that name a
// program, or move the config home back to the human's.
var claudeProgramEnv = []string{
	"CLAUDE_CONFIG_DIR", "CLAUDE_CODE_SHELL_PREFIX", "CLAUDE_CODE_SHELL", "SHELL", "NODE_OPTIONS",
	"BASH_ENV", "ENV", "LD_PRELOAD", "PATH",
}

// codexProgramKeys name programs in Codex's config.toml, at any depth
// (profiles and model providers nest them).
var codexProgramKeys = []string{
	"mcp_servers", "notify", "hooks", "plugins", "marketplaces", "command", "args",
	"credential_export", "http_headers_helper", "zsh_path", "main_execve_wrapper_exe", "codex_linux_sandbox_exe",
}

// geminiProgramKeys name programs in Gemini CLI's settings.json, at any
// depth (the current nested keys and the older flat ones): MCP servers,
// hooks, tool discovery and call commands, the sandbox command, the
// editor and the pager it starts.
var geminiProgramKeys = []string{
	"mcpServers", "hooks", "discoveryCommand", "callCommand", "serverCommand", "toolDiscoveryCommand",
	"toolCallCommand", "mcpServerCommand", "sandbox", "preferredEditor", "pager",
}

func humanClaudeDir(home string, getenv func(string) string) string {
	if d := getenv("CLAUDE_CONFIG_DIR"); filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(home, ".claude")
}

func humanCodexDir(home string, getenv func(string) string) string {
	if d := getenv("CODEX_HOME"); filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(home, ".codex")
}

func humanGeminiDir(home string, getenv func(string) string) string {
	if d := getenv("GEMINI_CLI_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, ".gemini")
	}
	return filepath.Join(home, ".gemini")
}

// seedAgentHomes seeds every agent's private config home beneath classDir
// from the human's config and returns the variables that point the agents
// there. A human's config that cannot be parsed cannot be stripped: the
// agent does not start until it is fixed.
func seedAgentHomes(classDir, home string, getenv func(string) string) ([]string, error) {
	root, err := os.OpenRoot(classDir)
	if err != nil {
		return nil, fmt.Errorf("class directory: %w", err)
	}
	defer root.Close()
	var env []string
	for _, h := range agentHomes {
		dir := filepath.Join(h.sub, h.inner)
		if err := root.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("%s config home: %w", h.variable, err)
		}
		if err := h.seed(h.human(home, getenv), privateHome{root, dir}, home); err != nil {
			return nil, fmt.Errorf("%s config home, seeded from %s: %w", h.variable, h.human(home, getenv), err)
		}
		env = append(env, h.variable+"="+filepath.Join(classDir, h.sub))
	}
	return env, nil
}

// seedClaude: settings.json and CLAUDE.md again at each start, stripped;
// .claude.json is the agent's own (its state) over the human's, stripped;
// the credentials copied when the human's are newer.
func seedClaude(human string, private privateHome, home string) error {
	// With CLAUDE_CONFIG_DIR set, Claude Code keeps .claude.json inside it;
	// else beside ~/.claude.
	humanGlobal := filepath.Join(home, ".claude.json")
	if human != filepath.Join(home, ".claude") {
		humanGlobal = filepath.Join(human, ".claude.json")
	}
	var errs []error
	errs = append(errs, seedJSON(filepath.Join(human, "settings.json"), private, "settings.json", false, claudeProgramKeys))
	errs = append(errs, private.remove("settings.local.json"))
	errs = append(errs, copyFresh(filepath.Join(human, "CLAUDE.md"), private, "CLAUDE.md", true))
	errs = append(errs, seedJSON(humanGlobal, private, ".claude.json", true, claudeProgramKeys))
	errs = append(errs, copyFresh(filepath.Join(human, ".credentials.json"), private, ".credentials.json", false))
	return errors.Join(errs...)
}

// seedCodex: config.toml and AGENTS.md again at each start, stripped;
// auth.json copied when the human's is newer; a hooks.json the agent left
// is removed.
func seedCodex(human string, private privateHome, _ string) error {
	var errs []error
	errs = append(errs, seedTOML(filepath.Join(human, "config.toml"), private, "config.toml"))
	errs = append(errs, private.remove("hooks.json"))
	errs = append(errs, copyFresh(filepath.Join(human, "AGENTS.md"), private, "AGENTS.md", true))
	errs = append(errs, copyFresh(filepath.Join(human, "auth.json"), private, "auth.json", false))
	return errors.Join(errs...)
}

// seedGemini: settings.json and GEMINI.md again at each start, stripped;
// the login (oauth_creds.json, google_accounts.json) copied when the
// human's is newer. What the agent could have left to act on its next run
// goes: extensions (each brings MCP servers and hooks), custom commands
// (which run shell commands), policies (which approve tools), and the
// .env files Gemini CLI loads (NODE_OPTIONS). Its history, chats and
// other state stay.
func seedGemini(human string, private privateHome, _ string) error {
	var errs []error
	errs = append(errs, seedJSON(filepath.Join(human, "settings.json"), private, "settings.json", false, geminiProgramKeys))
	errs = append(errs, copyFresh(filepath.Join(human, "GEMINI.md"), private, "GEMINI.md", true))
	errs = append(errs, copyFresh(filepath.Join(human, "oauth_creds.json"), private, "oauth_creds.json", false))
	errs = append(errs, copyFresh(filepath.Join(human, "google_accounts.json"), private, "google_accounts.json", false))
	for _, name := range []string{"extensions", "commands", "policies", ".env"} {
		errs = append(errs, private.removeAll(name))
	}
	// $GEMINI_CLI_HOME/.env, beside .gemini, is loaded too.
	errs = append(errs, privateHome{private.root, filepath.Dir(private.dir)}.remove(".env"))
	return errors.Join(errs...)
}

// seedJSON writes name in the private home: the JSON object at src, with
// the agent's own object there laid over it when keepOwn is set, keys
// in programKeys removed. With neither, name is removed: nothing the
// agent wrote there survives.
func seedJSON(src string, private privateHome, name string, keepOwn bool, programKeys []string) error {
	merged := map[string]any{}
	found := false
	human, err := os.ReadFile(src)
	switch {
	case err == nil:
		obj, err := decodeJSONObject(human)
		if err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		merged, found = obj, true
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if keepOwn {
		// The agent's own state; unreadable or broken, the human's alone.
		if b, err := private.root.ReadFile(private.path(name)); err == nil {
			if obj, err := decodeJSONObject(b); err == nil {
				for k, v := range obj {
					merged[k] = v
				}
				found = true
			}
		}
	}
	if !found {
		return private.remove(name)
	}
	stripKeys(merged, programKeys)
	if env, ok := merged["env"].(map[string]any); ok {
		for _, k := range claudeProgramEnv {
			delete(env, k)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(merged); err != nil {
		return err
	}
	return private.write(name, buf.Bytes())
}

func decodeJSONObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("not a JSON object")
	}
	return obj, nil
}

// seedTOML writes name in the private home: the TOML at src, keys naming
// programs removed; or removes it when there is no src.
func seedTOML(src string, private privateHome, name string) error {
	b, err := os.ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		return private.remove(name)
	}
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	stripKeys(doc, codexProgramKeys)
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(doc); err != nil {
		return err
	}
	return private.write(name, buf.Bytes())
}

// stripKeys removes the keys in names from v at any depth.
func stripKeys(v any, names []string) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if slices.Contains(names, k) {
				delete(v, k)
				continue
			}
			stripKeys(sub, names)
		}
	case []any:
		for _, sub := range v {
			stripKeys(sub, names)
		}
	case []map[string]any:
		for _, sub := range v {
			stripKeys(sub, names)
		}
	}
}

// copyFresh copies src to name in the private home when that is missing
// or older (always, with always set); without src, name is removed only
// with always set: a credential the agent refreshed stays its own.
func copyFresh(src string, private privateHome, name string, always bool) error {
	si, err := os.Stat(src)
	if errors.Is(err, fs.ErrNotExist) {
		if always {
			return private.remove(name)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !si.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", src)
	}
	if di, err := private.root.Lstat(private.path(name)); err == nil && !always && di.Mode().IsRegular() && !si.ModTime().After(di.ModTime()) {
		return nil
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := private.write(name, b); err != nil {
		return err
	}
	return private.root.Chtimes(private.path(name), si.ModTime(), si.ModTime())
}

// write replaces name by a new file (0600) with data, by rename: a symlink
// the agent left there is replaced, not followed.
func (p privateHome) write(name string, data []byte) error {
	tmp := p.path(fmt.Sprintf(".seed-%d-%s", os.Getpid(), name))
	p.root.Remove(tmp)
	f, err := p.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = p.root.Rename(tmp, p.path(name))
	}
	if err != nil {
		p.root.Remove(tmp)
	}
	return err
}

// removeAll removes name and everything beneath it, through the handle:
// a symlink there is removed, not followed.
func (p privateHome) removeAll(name string) error {
	if err := p.root.RemoveAll(p.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (p privateHome) remove(name string) error {
	if err := p.root.Remove(p.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
