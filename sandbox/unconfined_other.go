//go:build !linux

package sandbox

// unconfined is the argv of a command that runs with no sandbox: as it is
// (the helper's reaper is Linux's).
func unconfined(argv []string) *ConfinedArgv { return direct(argv) }
