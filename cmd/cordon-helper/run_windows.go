package main

import "github.com/cordonhq/cordon/sandbox"

// The windows-acl runner still lives with its backend.
const helperArg = sandbox.HelperArg

func run(args []string) { sandbox.RunHelper(args) }
