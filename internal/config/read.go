package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// maxConfigSize bounds a config file: a config is a few hundred bytes, and
// anything much larger is the wrong file.
const maxConfigSize = 1 << 20

// errConfigMissing is returned by readConfigFile for a file that does not
// exist, which is fine for the user and workspace files.
var errConfigMissing = errors.New("no such file")

// readConfigFile reads a config file. A file that exists but cannot be read
// (permissions, a directory, a FIFO, a dangling symlink) is an error: a
// config the human wrote must never be skipped silently.
func readConfigFile(name string) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			if _, lerr := os.Lstat(name); lerr == nil {
				return nil, fmt.Errorf("%s: cannot read the config: it is a symlink to a file that does not exist; fix or remove the link", name)
			}
			return nil, errConfigMissing
		}
		return nil, fmt.Errorf("%s: cannot read the config: %v; fix its permissions or move it away", name, unwrapPathError(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the config: %v", name, unwrapPathError(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: cannot read the config: it is a %s, not a regular file; replace it with a TOML file or move it away", name, fileKind(fi.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the config: %v; fix its permissions or move it away", name, unwrapPathError(err))
	}
	if len(data) > maxConfigSize {
		return nil, fmt.Errorf("%s: the config is larger than %d bytes: is this the right file?", name, maxConfigSize)
	}
	return data, nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}
