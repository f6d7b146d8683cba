//go:build !linux && !windows

package helper

import (
	"fmt"
	"os"
)

// Run exists only on Linux; elsewhere it refuses, so a stray
// re-exec can never run a command unconfined.
func Run(args []string) {
	fmt.Fprintln(os.Stderr, "cordon: sandbox runner failed: the confinement helper is only available on Linux")
	os.Exit(125)
}
