//go:build !unix

package sandbox

// processAlive cannot tell here: assume alive, so nothing is removed.
func processAlive(int) bool { return true }
