package fsfence

import (
	"io"
	"path/filepath"
)

// ReadFunc opens the regular file name in the directory, checked exactly as
// [Dir.OpenFile] checks it, and calls read with its contents and its size
// as of the open; the file is closed when read returns. It is for callers
// that read many small files once each (grep): on Linux the descriptor is
// read directly and never becomes an [os.File], which saves the two fcntl
// calls that turning it into one costs (O_NONBLOCK, which keeps a FIFO
// swapped in after the listing from blocking the open, is simply left set:
// it does not change how a regular file reads).
func (d *Dir) ReadFunc(name string, read func(r io.Reader, size int64)) error {
	if err := d.acquire("open", name); err != nil {
		return err
	}
	p, err := d.checkName("open", name)
	if err != nil {
		d.mu.RUnlock()
		return err
	}
	file, c, err := d.h.openReader(name, p)
	d.mu.RUnlock() // the open file does not need the directory's handle
	if err != nil {
		return pathErr("open", p, err)
	}
	defer file.Close()
	real := ""
	if c.procfs {
		real = filepath.Join(d.real, name)
	}
	if err := checkChild(d.m, "open", p, real, c, []fileID{c.id}); err != nil {
		return err
	}
	read(file, c.size)
	return nil
}
