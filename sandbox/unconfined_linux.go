package sandbox

import "github.com/cordonhq/cordon/internal/helper"

// unconfined is the argv of a command that runs with no sandbox (an
// approved danger-full-access call, --no-sandbox): unconfined, but not
// unbounded. Cordon's helper stays as its parent and child subreaper, so
// that everything it starts — `setsid -f`, a double fork, a daemon — ends
// with its call, and with cordon, as a confined command's does. The helper
// drops nothing from the command's privileges. Without a helper to run,
// the command runs as it is.
func unconfined(argv []string) *ConfinedArgv {
	exe, err := helperExePath()
	if err != nil {
		return direct(argv)
	}
	const statusFD, reapFD = 3, 4
	hc := helper.Config{StatusFD: statusFD, ReapFD: reapFD, Unconfined: true, Argv: argv}
	c := direct(append([]string{exe, helper.Arg}, hc.Args()...))
	c.statusFD, c.reapFD = statusFD, reapFD
	return c
}
