package tools

import "strings"

// UnavailableMessage is what every call of a cordon that cannot work
// returns (its configuration is broken, or refused): the reason, which
// names the file, the line and the fix, addressed to the human through the
// model, since the human sees the client, not cordon's stderr.
func UnavailableMessage(reason string) string {
	return "[sandbox: unavailable] cordon cannot run commands or touch files: " + strings.TrimSpace(reason) +
		"\nNothing ran. Tell the human what is wrong above: once it is fixed, restarting the MCP server (or the client) brings cordon back."
}

// UnavailableInstructions follow the reason in such a cordon's
// instructions.
const UnavailableInstructions = "Every tool call fails with SANDBOX_UNAVAILABLE and runs nothing until the human fixes this and restarts the MCP server; tell them."
