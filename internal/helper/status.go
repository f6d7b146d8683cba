package helper

// The status pipe: the helper writes StatusStarted just before it execs
// the command, or StatusError followed by a message when setting up the
// sandbox failed. Nothing at all means the runner never reached it.
// Before either, a line StatusHelper PID announces each process of
// cordon's own that the helper started beside the command (the warden):
// a process a cordon that is not root cannot read, and which the HTTP
// peer check may pass over because cordon, not the command, named it.
const (
	StatusStarted = "R"
	StatusError   = "E"
	StatusHelper  = "H"
)
