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
