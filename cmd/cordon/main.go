// Command cordon is an MCP server that gives AI agents a shell and a file
// system while the operating system keeps their side effects inside the
// boundary the human chose.
package main

import (
	"fmt"
	"io"
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
  cordon version

Configuration (TOML), later overriding earlier: $XDG_CONFIG_HOME/cordon/config.toml
(else ~/.config/cordon/config.toml), then the workspace's cordon.toml and
.cordon/config.toml (these may only tighten), then --config FILE, then flags.
'cordon status' shows where every value came from. 'cordon serve --http config'
serves HTTP at the config's [http] addr; SIGHUP makes serve re-read the files.

Run 'cordon COMMAND -h' for a command's flags.
`

func main() {
	// The confinement helper must run before anything else: it is on the
	// path of every confined command.
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperArg {
		sandbox.RunHelper(os.Args[2:])
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type commandFunc func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

var commands = map[string]commandFunc{
	"exec":     runExec,
	"serve":    runServe,
	"log":      runLog,
	"sessions": runSessions,
	"mode":     runMode,
	"status":   runStatus,
	"profile":  runProfile,
	"test":     runTest,
	"version":  runVersion,
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "cordon: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	return cmd(args[1:], stdin, stdout, stderr)
}
