package approval

// Answer is the human's answer to a question cordon asks: an escalation,
// a host, a command the classifier would not pass. Its values are what
// the elicitation form offers and what the session log records.
type Answer string

// The answers a human can give.
const (
	AllowOnce    Answer = "allow_once"
	AllowSession Answer = "allow_session"
	Deny         Answer = "deny"
)
