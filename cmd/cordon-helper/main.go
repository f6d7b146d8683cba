// Command cordon-helper is cordon's confinement helper on its own: the same
// code as `cordon __sandbox-helper`, in a binary that links nothing but the
// sandbox package, so a confined command does not pay for the start-up of
// the MCP libraries. cordon uses it when it lies beside cordon's own
// executable and re-executes itself otherwise.
package main

import (
	"os"

	"github.com/cordonhq/cordon/sandbox"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == sandbox.HelperArg {
		args = args[1:]
	}
	sandbox.RunHelper(args)
}
