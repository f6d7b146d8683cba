//go:build !linux

package main

// hideSecrets has nothing to do where cordon runs no Linux backend: the
// other backends' own process isolation applies.
func hideSecrets() error { return nil }
