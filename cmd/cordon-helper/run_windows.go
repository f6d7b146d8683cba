package main

import (
	"os"

	"github.com/cordonhq/cordon/internal/helper"
	"github.com/cordonhq/cordon/internal/winacl"
)

const helperArg = helper.Arg

// run is the windows-acl runner, which needs nothing of sandbox.
func run(args []string) { os.Exit(winacl.Run(args)) }
