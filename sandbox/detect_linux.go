package sandbox

// candidates are the Linux backends, strongest first.
func candidates() []Backend { return []Backend{newBwrap(), newLandlock()} }

// byName returns a backend that can be forced with --backend.
func byName(name string) Backend {
	switch name {
	case "bwrap":
		return newBwrap()
	case "landlock":
		return newLandlock()
	}
	return nil
}
