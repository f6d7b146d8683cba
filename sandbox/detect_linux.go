package sandbox

// candidates are the Linux backends, strongest first.
func candidates() []Provider { return []Provider{Bwrap(), Landlock()} }

// byName returns a backend that can be forced with --backend.
func byName(name string) Provider {
	switch name {
	case "bwrap":
		return Bwrap()
	case "landlock":
		return Landlock()
	}
	return nil
}
