package sandbox

// candidates are the Windows backends, strongest first. windows-acl is
// not there yet: confined modes fail closed.
func candidates() []Provider { return nil }

func byName(name string) Provider {
	switch name {
	case "bwrap", "landlock", "seatbelt":
		return Unavailable(name + " is not available on Windows")
	}
	return nil
}
