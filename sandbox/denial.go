package sandbox

import (
	"errors"
)

// errUnavailable is wrapped by every error that means "no backend can
// confine this command": the caller must not run it.
var errUnavailable = errors.New("sandbox unavailable")

// UnavailableError says why no backend could confine a command.
type UnavailableError struct{ Reason string }

func (e *UnavailableError) Error() string { return "sandbox unavailable: " + e.Reason }

// Unwrap lets errors.Is(err, errUnavailable) match.
func (e *UnavailableError) Unwrap() error { return errUnavailable }

// NeverRanError says a command never ran: the sandbox refused it before
// any process started (no backend could confine it, an *UnavailableError
// among the causes, or the policy cannot be confined). Err is why.
type NeverRanError struct{ Err error }

func (e *NeverRanError) Error() string { return e.Err.Error() }

// Unwrap gives the cause, so that errors.As still finds an
// *UnavailableError in it.
func (e *NeverRanError) Unwrap() error { return e.Err }
