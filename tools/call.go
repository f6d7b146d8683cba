package tools

import (
	"github.com/cordonhq/cordon/sandbox"
	"github.com/rs/zerolog"
)

// Call is what every tool call carries besides its arguments.
type Call struct {
	Session *Session
	// Asker is nil when nobody can be asked (no elicitation capability).
	Asker Asker
	// Progress reports progress when the client asked for it; may be nil.
	Progress func(progress float64, message string)
	// Warn tells the human something outside the tool's result, at once
	// (an MCP log message at level warning); may be nil.
	Warn func(message string)
	// st is the toolbox configuration the call runs under from start to
	// end: a SIGHUP reload in the middle of a call cannot mix the old
	// policy with the new executor. Set by pin at the tool's entry.
	st *toolboxState
	// read is the session's mode as the call read it, once, at its start
	// (SPEC §6, "One call, one mode"): the policy, the question and a
	// process's record all come from it, and the narrowing check compares
	// the session's mode now with it. Shared by the call's copies, so that
	// an allow_session the call obtains moves it for the rest of the call.
	read *modeReading
}

// modeReading is a call's one reading of its session's mode.
type modeReading struct {
	mode sandbox.Mode
}

// sessionMode is the session's mode as the call read it.
func (c Call) sessionMode() sandbox.Mode {
	if c.read == nil {
		return ""
	}
	return c.read.mode
}

// conf is the call's configuration.
func (c Call) conf() Config { return c.st.cfg }

func (c Call) logger() *zerolog.Logger {
	l := c.conf().Logger
	return &l
}
