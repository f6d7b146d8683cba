//go:build !linux

package sandbox

// mountPointsWithin: only Linux's mount table is read; elsewhere a bind
// mount inside a writable root is not looked for.
func mountPointsWithin([]string) []string { return nil }
