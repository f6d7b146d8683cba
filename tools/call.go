package tools

import "github.com/rs/zerolog"

// Call is what every tool call carries besides its arguments.
type Call struct {
	Session *Session
	// Asker is nil when nobody can be asked (no elicitation capability).
	Asker Asker
	// Progress reports progress when the client asked for it; may be nil.
	Progress func(progress float64, message string)
	// st is the toolbox configuration the call runs under from start to
	// end: a SIGHUP reload in the middle of a call cannot mix the old
	// policy with the new executor. Set by pin at the tool's entry.
	st *toolboxState
}

// conf is the call's configuration.
func (c Call) conf() Config { return c.st.cfg }

func (c Call) logger() *zerolog.Logger {
	l := c.conf().Logger
	return &l
}
