package sandbox

import "fmt"

// invariantError is returned, in release builds, where a development build
// panics: a state the code promises can never exist.
type invariantError struct{ Msg string }

func (e *invariantError) Error() string { return "[sandbox invariant] " + e.Msg }

// invariant reports a broken promise of this package. Development builds
// panic so that tests catch it at once; release builds (-tags
// cordon_release) return an error, which every caller treats as a refusal,
// so a broken invariant can only ever fail closed.
func invariant(format string, args ...any) error {
	err := &invariantError{Msg: fmt.Sprintf(format, args...)}
	if devBuild {
		panic(err.Error())
	}
	return err
}
