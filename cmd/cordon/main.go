// Command cordon is an MCP server that gives AI agents a shell and a file
// system while the operating system keeps their side effects inside the
// boundary the human chose.
package main

import (
	"os"

	"github.com/cordonhq/cordon/sandbox"
)

// Exit codes of every subcommand; exec passes the command's own through.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitSandbox = 125
)

// usage is `cordon --help`, and what a bare `cordon` prints to stderr.
const usage = `cordon: a sandboxed shell and file system for AI agents, over MCP

usage:
  cordon serve   [--http ADDR] [--workspace DIR] [--mode MODE] [flags]   run the MCP server
  cordon exec    [--mode MODE] [--workspace DIR] [flags] -- CMD [ARGS...] run one command confined
  cordon status  [--json] [--config FILE]     backend, probe, enforcement, policy and its origins
  cordon profile [--mode MODE] [--json]       the confined argv and rules for a mode
  cordon test                                 prove containment (exit 0 only when proved)
  cordon log     [SESSION] [--verify] [--json]   show or verify a session log
  cordon sessions [--json]                    list sessions and their effective modes
  cordon mode    --session ID MODE            change a live session's mode (source: user)
  cordon token   add NAME | list | revoke NAME   HTTP clients' own tokens (principals)
  cordon wrap    [--class CLASS] [flags] -- CMD [ARGS...] run an MCP server or agent CLI confined
  cordon completion bash|zsh|fish|powershell  a shell completion script
  cordon version
  cordon help    [COMMAND]

Flags may come before or after the other arguments ('cordon log ID --verify');
'--' ends them, and exec's (wrap's, profile's) command line starts at its first
argument, so that the command's own flags pass through.

Configuration (TOML), later overriding earlier: $XDG_CONFIG_HOME/cordon/config.toml
(else ~/.config/cordon/config.toml), then the workspace's cordon.toml and
.cordon/config.toml (these may only tighten), then --config FILE, then flags.
'cordon status' shows where every value came from. 'cordon serve --http config'
serves HTTP at the config's [http] addr; SIGHUP makes serve re-read the files.

Exit codes: 0 success, 1 failure, 2 usage error; exec and wrap exit with
the command's code, or 125 when the sandbox cannot be set up.

Run 'cordon COMMAND --help' for a command's flags.
`

func main() {
	// The confinement helper must run before anything else: it is on the
	// path of every confined command, and the command line's parser is
	// not built for it.
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperArg {
		sandbox.RunHelper(os.Args[2:])
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
