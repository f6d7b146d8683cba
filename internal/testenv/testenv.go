// Package testenv holds what cordon's tests share about the machine they
// run on. It is for tests only.
package testenv

import (
	"os"
	"testing"
)

// SkipUnlessCI skips a test this machine cannot run, saying why; in CI
// (CORDON_CI, set by .ci/run, which runs as root and installs every tool
// the tests need) it fails instead: a security test skipped there would
// prove nothing and look green.
func SkipUnlessCI(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CORDON_CI") != "" {
		t.Fatalf("%s: CI must run this test (.ci/run installs what it needs)", why)
	}
	t.Skip("skipped: " + why)
}
