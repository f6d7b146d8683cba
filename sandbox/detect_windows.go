package sandbox

// candidates are the Windows backends, strongest first.
func candidates() []Backend { return []Backend{newWindowsACL()} }

// byName returns a backend that can be forced with --backend.
func byName(name string) Backend {
	switch name {
	case windowsACLName:
		return newWindowsACL()
	case "bwrap", "landlock", "seatbelt":
		return unavailableBackend(name + " is not available on Windows")
	}
	return nil
}
