package tools

import (
	"os"
	"testing"

	"github.com/cordonhq/cordon/sandbox"
)

// TestMain lets the test binary serve as cordon's confinement helper: a
// test that runs a command through a real backend re-executes it, and
// without this it would run the whole suite again, and again.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperArg {
		sandbox.RunHelper(os.Args[2:])
	}
	os.Exit(m.Run())
}
