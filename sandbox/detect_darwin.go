package sandbox

// candidates are the macOS backends, strongest first.
func candidates() []Backend { return []Backend{newSeatbelt()} }

// byName returns a backend that can be forced with --backend.
func byName(name string) Backend {
	switch name {
	case "seatbelt":
		return newSeatbelt()
	case "bwrap", "landlock":
		return unavailableBackend(name + " is only available on Linux")
	}
	return nil
}
