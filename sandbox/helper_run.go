//go:build !windows

package sandbox

import "github.com/cordonhq/cordon/internal/helper"

// RunHelper runs the confinement helper. It never returns.
func RunHelper(args []string) { helper.Run(args) }
