package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// mcpClient is one MCP client cordon can be added to: where its
// configuration lives and the text that adds cordon there.
type mcpClient struct {
	name  string
	where string
	// config renders the line or file fragment for a server started as
	// command with args.
	config func(command string, args []string) string
}

// mcpClients are the clients `cordon client-config` knows, in the order
// `make run` prints them.
var mcpClients = []mcpClient{
	{"claude-code", "from the shell, in the project", func(c string, a []string) string {
		return "claude mcp add cordon -- " + shellLine(c, a)
	}},
	{"codex", "~/.codex/config.toml", func(c string, a []string) string {
		return fmt.Sprintf("[mcp_servers.cordon]\ncommand = %s\nargs = [%s]", jsonLine(c), tomlList(a))
	}},
	{"gemini", "~/.gemini/settings.json, or .gemini/settings.json in the project", mcpServersJSON},
	{"qwen", "~/.qwen/settings.json, or .qwen/settings.json in the project", mcpServersJSON},
	{"opencode", "opencode.json in the project, or ~/.config/opencode/opencode.json", func(c string, a []string) string {
		return jsonLine(map[string]any{"$schema": "https://opencode.ai/config.json", "mcp": map[string]any{
			"cordon": map[string]any{"type": "local", "command": append([]string{c}, a...), "enabled": true}}})
	}},
	{"claude-desktop", "claude_desktop_config.json (Settings → Developer → Edit Config)", mcpServersJSON},
	{"cursor", "~/.cursor/mcp.json, or .cursor/mcp.json in the project", mcpServersJSON},
	{"vscode", ".vscode/mcp.json in the project", func(c string, a []string) string {
		return jsonLine(map[string]any{"servers": map[string]any{
			"cordon": map[string]any{"type": "stdio", "command": c, "args": a}}})
	}},
}

// mcpServersJSON is the "mcpServers" object most clients read.
func mcpServersJSON(c string, a []string) string {
	return jsonLine(map[string]any{"mcpServers": map[string]any{"cordon": map[string]any{"command": c, "args": a}}})
}

func jsonLine(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func tomlList(a []string) string {
	q := make([]string, len(a))
	for i, s := range a {
		q[i] = jsonLine(s) // a JSON string is a TOML basic string
	}
	return strings.Join(q, ", ")
}

// shellLine quotes what a POSIX shell would split or expand.
func shellLine(c string, a []string) string {
	words := append([]string{c}, a...)
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
			words[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(words, " ")
}

func clientNames() []string {
	names := make([]string, len(mcpClients))
	for i, c := range mcpClients {
		names[i] = c.name
	}
	return names
}

func newClientConfigCmd() *cobra.Command {
	var workspace string
	var all bool
	cmd := &cobra.Command{
		Use:   "client-config [CLIENT] [--workspace DIR]",
		Short: "print what adds cordon to an MCP client (" + strings.Join(clientNames(), ", ") + ")",
		Long: `Print the line or configuration fragment that adds this cordon to an MCP
client, with this binary's absolute path and the workspace (default: the
current directory). With --all, or no CLIENT, every client's.`,
		Example: "  cordon client-config claude-code\n  cordon client-config vscode --workspace ~/src/app",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return syntaxf("one CLIENT at most: %s", strings.Join(clientNames(), ", "))
			}
			if len(args) == 1 && !slices.Contains(clientNames(), args[0]) {
				return usagef("unknown client %q: use one of %s", args[0], strings.Join(clientNames(), ", "))
			}
			return nil
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return clientNames(), cobra.ShellCompDirectiveNoFileComp
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "the project `DIR` the agent may write (default: the current directory)")
	cmd.Flags().BoolVar(&all, "all", false, "every client's")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		name := ""
		if len(args) == 1 && !all {
			name = args[0]
		}
		return runClientConfig(name, workspace, cmd.OutOrStdout())
	}
	return cmd
}

// runClientConfig prints one client's configuration, or every client's
// under a heading each when name is "".
func runClientConfig(name, workspace string, stdout io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding cordon's own path: %w", err)
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		return fmt.Errorf("finding cordon's own path: %w", err)
	}
	if workspace == "" {
		if workspace, err = os.Getwd(); err != nil {
			return err
		}
	}
	if workspace, err = filepath.Abs(workspace); err != nil {
		return usagef("--workspace: %v", err)
	}
	args := []string{"serve", "--workspace", workspace}
	for _, c := range mcpClients {
		switch {
		case name == c.name:
			fmt.Fprintln(stdout, c.config(self, args))
		case name == "":
			fmt.Fprintf(stdout, "%s (%s):\n  %s\n", c.name, c.where, strings.ReplaceAll(c.config(self, args), "\n", "\n  "))
		}
	}
	return nil
}
