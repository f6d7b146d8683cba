package helper

// The status pipe: the helper writes StatusStarted just before it execs
// the command, or StatusError followed by a message when setting up the
// sandbox failed. Nothing at all means the runner never reached it.
const (
	StatusStarted = "R"
	StatusError   = "E"
)
