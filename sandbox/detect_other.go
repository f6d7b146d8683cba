//go:build !linux && !darwin && !windows

package sandbox

import "runtime"

// candidates are this platform's backends, strongest first: none, so
// confined modes fail closed.
func candidates() []Backend { return nil }

func byName(name string) Backend {
	switch name {
	case "bwrap", "landlock", "seatbelt":
		return unavailableBackend(name + " is not available on " + runtime.GOOS)
	}
	return nil
}
