//go:build !linux

package sandbox

import "runtime"

// candidates are this platform's backends, strongest first. Seatbelt
// (macOS) and windows-acl are not there yet, so confined modes fail closed.
func candidates() []Provider { return nil }

func byName(name string) Provider {
	switch name {
	case "bwrap", "landlock":
		return Unavailable(name + " is only available on Linux, not " + runtime.GOOS)
	}
	return nil
}
