//go:build !unix

package sandbox

// fileStoreFor has no lock files to offer here: calls are coordinated
// within the process.
func fileStoreFor(string) guardStore { return nil }

// RecoverGuards has nothing to recover where baselines live in memory.
func RecoverGuards(string) ([]Change, error) { return nil, nil }
