//go:build linux

package fsfence

import (
	"io"

	"golang.org/x/sys/unix"
)

// openReader is openFile for [Dir.ReadFunc]: the same open and check,
// without the os package's wrapping.
func (h *dirFD) openReader(name, _ string) (io.ReadCloser, opened, error) {
	fd, err := openat2(h.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, beneath)
	if err != nil {
		return nil, opened{}, err
	}
	c, err := h.opened(fd, unix.S_IFREG)
	if err != nil {
		unix.Close(fd)
		return nil, opened{}, err
	}
	return fdReader(fd), c, nil
}

// fdReader reads a regular file's descriptor with read(2).
type fdReader int

func (r fdReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(int(r), p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (r fdReader) Close() error { return unix.Close(int(r)) }
