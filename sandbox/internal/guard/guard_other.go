//go:build !unix

package guard

// No such flags here; the guard serves the Linux backends.
const (
	oNoFollow = 0
	oNonBlock = 0
)
