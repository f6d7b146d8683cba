package sandbox

// callFacts are what a backend builds a call's argv from besides the
// policy and its mount plan: the call's egress proxy, and what was found
// on this machine. They are gathered before the argv is built, which then
// reads nothing (bwrapBackend.args, seatbeltProfile): the golden tests
// give fixed facts and get the same argv on every machine.
type callFacts struct {
	// egress is the call's proxy under network restricted, else nil.
	egress *egressEndpoint
	// dockerSockets are the Docker daemons' sockets found here, refused
	// even inside a writable root.
	dockerSockets []string
	// runtimeDirs are the user's runtime directories, replaced by an empty
	// tmpfs (bwrap).
	runtimeDirs []string
}

// egressPort is the port of the call's proxy; 0 without one.
func (f callFacts) egressPort() int {
	if f.egress == nil {
		return 0
	}
	return f.egress.port()
}
