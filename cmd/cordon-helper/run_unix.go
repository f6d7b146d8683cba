//go:build !windows

package main

import "github.com/cordonhq/cordon/internal/helper"

const helperArg = helper.Arg

func run(args []string) { helper.Run(args) }
