// Command cordon-helper is cordon's confinement helper on its own: the same
// code as `cordon __sandbox-helper`, in a binary that links nothing but
// what the helper runs (internal/helper on Linux, internal/winacl's runner
// on Windows), so a confined command does not pay for the start-up of the
// MCP libraries. cordon uses it when it lies beside cordon's own
// executable and re-executes itself otherwise.
package main

import "os"

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == helperArg {
		args = args[1:]
	}
	run(args)
}
