//go:build !unix

package guard

// fileStoreFor has no lock files to offer here: calls are coordinated
// within the process.
func fileStoreFor(string) Store { return nil }

// Recover has nothing to recover where baselines live in memory.
func Recover(string) ([]Change, error) { return nil, nil }
