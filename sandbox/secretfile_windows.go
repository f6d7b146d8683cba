package sandbox

import (
	"errors"
	"os"
)

// soleOwnName: masked copies are bwrap's alone.
func soleOwnName(f *os.File) error {
	return errors.New("a secret file's masked copy needs Linux")
}
