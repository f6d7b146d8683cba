//go:build linux

package fsfence

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dirFD is the handle of a [Dir]: an O_PATH descriptor (enough to open,
// stat and list beneath it) and what its children inherit from it.
type dirFD struct {
	fd     int
	dev    uint64 // a child on another device is a mount root: look at its file system
	procfs bool
	// unlisted is 1 while fd is open for reading (a directory entered
	// with Dir.OpenDir) and nothing has listed it yet: the first listing
	// reads it directly, at offset 0, which saves opening "." again and
	// closing it, two of a walk's eight calls per directory. Later
	// listings open their own, as before.
	unlisted int32
}

// dirFromTarget keeps the handle the read check opened and checked.
func dirFromTarget(t *readTarget) (dirFD, error) {
	h := dirFD{fd: t.fd, dev: t.info.id.dev, procfs: t.procfs}
	t.fd = -1
	return h, nil
}

func (h *dirFD) close() {
	if h.fd >= 0 {
		unix.Close(h.fd)
		h.fd = -1
	}
}

// openFile opens a regular file beneath the handle, following nothing
// (see [Dir]). O_NONBLOCK keeps a FIFO swapped in after the listing from
// blocking; what was opened is fstat'ed before anything is read, and is
// refused unless it is a regular file.
func (h *dirFD) openFile(name, p string) (*os.File, opened, error) {
	fd, err := openat2(h.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, beneath)
	if err != nil {
		return nil, opened{}, err
	}
	c, err := h.opened(fd, unix.S_IFREG)
	if err == nil {
		// Back to blocking reads. F_SETFL changes only the status flags,
		// and O_NONBLOCK is the only one that was set.
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, 0)
	}
	if err != nil {
		unix.Close(fd)
		return nil, opened{}, err
	}
	return os.NewFile(uintptr(fd), p), c, nil
}

// openDir opens a directory beneath the handle, following nothing. It is
// opened for reading, so that its first listing can use the handle (see
// unlisted); one that may be searched but not read is opened O_PATH, as
// every directory handle was before.
func (h *dirFD) openDir(name string) (dirFD, opened, error) {
	unlisted := int32(1)
	fd, err := openat2(h.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, beneath)
	if err == unix.EACCES {
		unlisted = 0
		fd, err = openat2(h.fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW, beneath)
	}
	if err != nil {
		return dirFD{}, opened{}, err
	}
	c, err := h.opened(fd, unix.S_IFDIR)
	if err != nil {
		unix.Close(fd)
		return dirFD{}, opened{}, err
	}
	return dirFD{fd: fd, dev: c.id.dev, procfs: c.procfs, unlisted: unlisted}, c, nil
}

// opened looks at a child just opened: it must be of type want.
func (h *dirFD) opened(fd int, want uint32) (opened, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return opened{}, err
	}
	if typ := st.Mode & unix.S_IFMT; typ != want {
		if want == unix.S_IFDIR {
			return opened{}, syscall.ENOTDIR
		}
		return opened{}, fmt.Errorf("%w (%s)", ErrNotRegular, kindOfMode(typ))
	}
	c := opened{id: idOf(&st), procfs: h.procfs, size: st.Size}
	if c.id.dev != h.dev {
		var sfs unix.Statfs_t
		if err := unix.Fstatfs(fd, &sfs); err != nil {
			return opened{}, err
		}
		c.procfs = sfs.Type == unix.PROC_SUPER_MAGIC
	}
	return c, nil
}

func kindOfMode(typ uint32) kind {
	switch typ {
	case unix.S_IFDIR:
		return kindDir
	case unix.S_IFREG:
		return kindFile
	case unix.S_IFLNK:
		return kindSymlink
	}
	return kindOther
}

// place returns the kernel's view of a directory just opened beneath its
// parent, and its identity followed by its ancestors'. When the view is
// the parent's plus the name (want), the ancestors are the parent's (see
// [Dir]); when it is not, something on the way was moved since the parent
// was checked, and the ancestors are found by walking ".." as the path
// check does.
func (h *dirFD) place(want string, id fileID, up []fileID) (string, []fileID, error) {
	real, err := fdPath(h.fd)
	if err != nil {
		return "", nil, err
	}
	if real == want {
		return real, append([]fileID{id}, up...), nil
	}
	ids, err := lineage(h.fd)
	if err != nil {
		return "", nil, err
	}
	return real, ids, nil
}

// lstat looks at one name beneath the handle without following it.
func (h *dirFD) lstat(name string) (fs.FileInfo, fileID, error) {
	fi := &fileStat{name: name}
	if err := unix.Fstatat(h.fd, name, (*unix.Stat_t)(unsafe.Pointer(&fi.sys)), unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, fileID{}, err
	}
	return fi, fileID{uint64(fi.sys.Dev), uint64(fi.sys.Ino)}, nil //nolint:unconvert // Dev is 32-bit on some ports
}

// The two Stat_t are the same kernel structure (lstat fills the one
// os.FileInfo.Sys callers expect through the other): fail to compile if
// their sizes ever differ.
const _ = -(unsafe.Sizeof(unix.Stat_t{}) - unsafe.Sizeof(syscall.Stat_t{}))

// fileStat is an [fs.FileInfo] of an fstatat, as the os package makes one.
type fileStat struct {
	name string
	sys  syscall.Stat_t
}

func (s *fileStat) Name() string       { return s.name }
func (s *fileStat) Size() int64        { return s.sys.Size }
func (s *fileStat) ModTime() time.Time { return time.Unix(s.sys.Mtim.Unix()) }
func (s *fileStat) IsDir() bool        { return s.Mode().IsDir() }
func (s *fileStat) Sys() any           { return &s.sys }
func (s *fileStat) Mode() fs.FileMode {
	m := fs.FileMode(s.sys.Mode & 0o777)
	switch s.sys.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if s.sys.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if s.sys.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if s.sys.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

var direntBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// list reads the names in the directory with getdents64: the first time
// on the handle itself when it can (see unlisted), after that on a
// descriptor of its own (so that listings do not share an offset). A name
// whose type the file system does not report is looked at with fstatat
// beneath the handle, never by path.
func (h *dirFD) list() ([]rawEntry, error) {
	fd := h.fd
	if !atomic.CompareAndSwapInt32(&h.unlisted, 1, 0) {
		var err error
		fd, err = unix.Openat(h.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		defer unix.Close(fd)
	}
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var out []rawEntry
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		// struct linux_dirent64: d_ino u64, d_off s64, d_reclen u16,
		// d_type u8, d_name NUL-terminated.
		for rec := buf[:n]; len(rec) > 0; {
			if len(rec) < 19 {
				return out, syscall.EIO
			}
			reclen := int(binary.NativeEndian.Uint16(rec[16:18]))
			if reclen < 19 || reclen > len(rec) {
				return out, syscall.EIO
			}
			ino, typ, name := binary.NativeEndian.Uint64(rec[0:8]), rec[18], rec[19:reclen]
			rec = rec[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if ino == 0 || string(name) == "." || string(name) == ".." {
				continue // a deleted entry, or not a child
			}
			e := rawEntry{name: string(name)}
			switch typ {
			case unix.DT_REG:
			case unix.DT_DIR:
				e.typ = fs.ModeDir
			case unix.DT_LNK:
				e.typ = fs.ModeSymlink
			case unix.DT_FIFO:
				e.typ = fs.ModeNamedPipe
			case unix.DT_SOCK:
				e.typ = fs.ModeSocket
			case unix.DT_CHR:
				e.typ = fs.ModeDevice | fs.ModeCharDevice
			case unix.DT_BLK:
				e.typ = fs.ModeDevice
			default:
				fi, _, err := h.lstat(e.name)
				if os.IsNotExist(err) {
					continue // gone since the listing, as the os package does
				}
				if err != nil {
					return out, err
				}
				e.typ = fi.Mode().Type()
			}
			out = append(out, e)
		}
	}
}
