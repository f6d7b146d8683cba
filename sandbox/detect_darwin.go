package sandbox

// candidates are the macOS backends, strongest first. The Seatbelt
// backend is not there yet: confined modes fail closed.
func candidates() []Provider { return nil }

func byName(name string) Provider {
	switch name {
	case "bwrap", "landlock":
		return Unavailable(name + " is only available on Linux")
	case "seatbelt":
		return Unavailable("the seatbelt backend is not built yet")
	}
	return nil
}
