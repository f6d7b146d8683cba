//go:build !linux

package fsfence

// pathWatch exists only where the kernel reports changes (Linux); here
// every cached resolution is validated by looking again.
type pathWatch struct{}

var testNoWatcher bool

func beginWatch() *pathWatch        { return nil }
func (*pathWatch) add(string, bool) {}
func (*pathWatch) addTree(string)   {}
func (*pathWatch) current() bool    { return false }
func (*pathWatch) usable() bool     { return false }
