//go:build !linux

package fsfence

import "io"

// openReader is openFile for [Dir.ReadFunc].
func (h *dirFD) openReader(name, p string) (io.ReadCloser, opened, error) {
	f, c, err := h.openFile(name, p)
	if err != nil {
		return nil, opened{}, err
	}
	if fi, err := f.Stat(); err == nil {
		c.size = fi.Size()
	}
	return f, c, nil
}
