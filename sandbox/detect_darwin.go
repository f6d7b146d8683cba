package sandbox

// candidates are the macOS backends, strongest first.
func candidates() []Provider { return []Provider{Seatbelt()} }

// byName returns a backend that can be forced with --backend.
func byName(name string) Provider {
	switch name {
	case "seatbelt":
		return Seatbelt()
	case "bwrap", "landlock":
		return Unavailable(name + " is only available on Linux")
	}
	return nil
}
