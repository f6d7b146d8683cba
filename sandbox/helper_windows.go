package sandbox

import "os"

// RunHelper is the windows-acl runner: it takes a restricted token and
// starts the command in a job object. It never returns.
func RunHelper(args []string) { os.Exit(runWindowsACLRunner(args)) }
