//go:build unix && !linux

package fsfence_test

import "testing"

// fastTempDir: see the Linux version.
func fastTempDir(t *testing.T) string { return t.TempDir() }
