//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

// openNoSymlinks: masked copies are bwrap's alone.
func openNoSymlinks(path string) (*os.File, error) {
	return nil, errors.New("a secret file's masked copy needs Linux")
}
