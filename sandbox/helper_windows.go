package sandbox

import (
	"os"

	"github.com/cordonhq/cordon/internal/winacl"
)

// RunHelper is the windows-acl runner (internal/winacl): it takes a
// restricted token and starts the command in a job object. It never
// returns.
func RunHelper(args []string) { os.Exit(winacl.Run(args)) }
