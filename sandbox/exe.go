package sandbox

import (
	"fmt"
	"os"
	"sync"
)

// helperExe is cordon's own executable, opened once. bwrap execs the
// helper through this descriptor (/proc/self/fd/N inside the sandbox), so
// it works even when the binary lives somewhere the sandbox hides, such
// as the host's /tmp.
var helperExe = sync.OnceValues(func() (*os.File, error) {
	path, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding cordon's executable: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening cordon's executable: %w", err)
	}
	return f, nil
})

// helperExePath is the executable's path, for backends that exec it
// directly on the host.
var helperExePath = sync.OnceValues(os.Executable)
