//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

// Masked copies of secret files are bwrap's alone.
var errMaskedCopyLinuxOnly = errors.New("a secret file's masked copy needs Linux")

func openNoSymlinks(string) (*os.File, error) { return nil, errMaskedCopyLinuxOnly }

func soleOwnName(*os.File) error { return errMaskedCopyLinuxOnly }
