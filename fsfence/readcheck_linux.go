//go:build linux

package fsfence

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readTarget is an object opened for a read check (O_PATH: nothing has been
// read yet) together with what the check needs to know about it.
type readTarget struct {
	fd       int
	realPath string
	info     entryInfo
	kind     kind
	lineage  []fileID // the object, its directory, and every ancestor
	procfs   bool
}

// openForCheck opens path for a read check. Ordinary symlinks are followed
// (reads are allowed anywhere), magic links are not: /proc/self/root,
// /proc/PID/cwd and /proc/self/fd/N would hand us an object without a path
// we could check by name. Lineages found on the way are kept in lineages.
func openForCheck(path string, lineages *lineageCache) (*readTarget, error) {
	var lastErr error
	for range 8 { // a rename racing the parent lookup below: look again
		t, err := openForCheckOnce(path, lineages)
		if !errors.Is(err, errRaced) {
			return t, err
		}
		lastErr = err
	}
	return nil, lastErr
}

// errRaced matches EAGAIN: the caller may simply try again.
var errRaced = fmt.Errorf("file moved while being checked: %w", syscall.EAGAIN)

func openForCheckOnce(path string, lineages *lineageCache) (*readTarget, error) {
	fd, realPath, err := openFollowing(path)
	if err != nil {
		return nil, err
	}
	t := &readTarget{fd: fd, realPath: realPath}
	ok := false
	defer func() {
		if !ok {
			t.close()
		}
	}()
	st, mount, err := fstatMount(fd)
	if err != nil {
		return nil, err
	}
	t.info = infoOfStatx(&st)
	if t.realPath == "" {
		if t.realPath, err = fdPath(fd); err != nil {
			return nil, err
		}
	}
	// procfs, like every file system without a block device, has a device
	// number of major 0: only those can be procfs, and only they need the
	// statfs that tells.
	if st.Dev_major == 0 {
		var sfs unix.Statfs_t
		if err := unix.Fstatfs(fd, &sfs); err != nil {
			return nil, err
		}
		t.procfs = sfs.Type == unix.PROC_SUPER_MAGIC
	}
	switch uint32(st.Mode) & unix.S_IFMT {
	case unix.S_IFDIR:
		t.kind = kindDir
		key := lineageKey{t.realPath, mount}
		if ids, hit := lineages.get(key); hit && ids[0] == t.info.id {
			t.lineage = ids
		} else {
			if t.lineage, err = lineage(fd); err != nil {
				return nil, err
			}
			lineages.put(key, t.lineage)
		}
		ok = true
		return t, nil
	case unix.S_IFREG:
		t.kind = kindFile
	default:
		t.kind = kindOther
	}
	// A non-directory has no ".." to walk, so find its directory by the
	// kernel's path and make sure the file really is in it.
	dir, base := filepath.Dir(t.realPath), filepath.Base(t.realPath)
	key := lineageKey{dir, mount}
	if up, hit := lineages.get(key); hit {
		t.lineage = append([]fileID{t.info.id}, up...)
		ok = true
		return t, nil
	}
	pfd, err := openat2(unix.AT_FDCWD, dir, unix.O_PATH|unix.O_DIRECTORY, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return nil, errRaced
	}
	defer unix.Close(pfd)
	var cst unix.Stat_t
	if err := unix.Fstatat(pfd, base, &cst, unix.AT_SYMLINK_NOFOLLOW); err != nil || idOf(&cst) != t.info.id {
		return nil, errRaced
	}
	up, err := lineage(pfd)
	if err != nil {
		return nil, err
	}
	lineages.put(key, up)
	t.lineage = append([]fileID{t.info.id}, up...)
	ok = true
	return t, nil
}

// fstatMount is fstat(2) through statx(2), which also tells the unique id
// of the handle's mount (0 where the kernel has none: before Linux 6.8).
func fstatMount(fd int) (x unix.Statx_t, mount uint64, err error) {
	err = unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_STATX_SYNC_AS_STAT, unix.STATX_BASIC_STATS|unix.STATX_MNT_ID_UNIQUE, &x)
	if err == nil && x.Mask&unix.STATX_MNT_ID_UNIQUE != 0 {
		mount = x.Mnt_id
	}
	return x, mount, err
}

func infoOfStatx(x *unix.Statx_t) entryInfo {
	return entryInfo{
		perm:  fs.FileMode(x.Mode & 0o777),
		id:    fileID{unix.Mkdev(x.Dev_major, x.Dev_minor), x.Ino},
		size:  int64(x.Size), //nolint:gosec // a file size fits
		mtime: x.Mtime.Sec*1e9 + int64(x.Mtime.Nsec),
		uid:   int(x.Uid),
		gid:   int(x.Gid),
	}
}

// openFollowing opens path as O_PATH, following ordinary symlinks and no
// magic link, and returns the kernel's path of what it opened when that is
// known without asking: a path the kernel resolved without following any
// link is the path it reports (the lookup went through exactly the
// components given, mounts included), which saves reading /proc for most
// paths. With a symlink on the way, realPath is "" and the caller asks.
func openFollowing(path string) (fd int, realPath string, err error) {
	fd, err = openat2(unix.AT_FDCWD, path, unix.O_PATH, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err == nil {
		return fd, path, nil
	}
	if err != unix.ELOOP {
		return -1, "", err
	}
	fd, err = openat2(unix.AT_FDCWD, path, unix.O_PATH, unix.RESOLVE_NO_MAGICLINKS)
	if err == unix.ELOOP {
		return -1, "", errMagicLink
	}
	return fd, "", err
}

// open reopens the checked inode for reading through its own handle, so the
// file read is the file checked even if the path changed meanwhile. The
// information returned is the reopened handle's.
func (t *readTarget) open(name string) (*os.File, fs.FileInfo, error) {
	flags := unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOCTTY
	if t.kind == kindDir {
		flags |= unix.O_DIRECTORY
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(t.fd), flags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi := &fileStat{name: filepath.Base(name)}
	st := (*unix.Stat_t)(unsafe.Pointer(&fi.sys))
	if err := unix.Fstat(fd, st); err != nil || idOf(st) != t.info.id {
		unix.Close(fd)
		return nil, nil, bug("reopened handle is not the checked file")
	}
	return os.NewFile(uintptr(fd), name), fi, nil
}

func (t *readTarget) stat(name string) (fs.FileInfo, error) {
	// os.File.Stat is fstat, which works on O_PATH handles. The handle is
	// dup'ed so that closing the temporary *os.File leaves t.fd alone.
	fd, err := unix.FcntlInt(uintptr(t.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return f.Stat()
}

// lstatAt looks at name in the checked directory without following it.
func (t *readTarget) lstatAt(name string) (fs.FileInfo, error) {
	fd, err := openat2(t.fd, name, unix.O_PATH|unix.O_NOFOLLOW, beneath)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return f.Stat()
}

func (t *readTarget) readlinkAt(name string) (string, error) {
	fd, err := openat2(t.fd, name, unix.O_PATH|unix.O_NOFOLLOW, beneath)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return "", unix.EINVAL
	}
	return readlinkFD(fd)
}

func (t *readTarget) close() {
	if t != nil && t.fd >= 0 {
		unix.Close(t.fd)
		t.fd = -1
	}
}

// procDenied refuses per-process procfs files. They are not on anyone's
// read-deny list, yet /proc/PID/environ and /proc/PID/mem of the server
// itself hold its secrets (the HTTP token, API keys in its environment).
// /proc/self resolves to /proc/PID, so the kernel's path always shows the
// number. /proc/kcore is kernel memory.
func (t *readTarget) procDenied() bool {
	return t.procfs && procPathDenied(t.realPath)
}

// procPathDenied reports whether the kernel's path of an object on procfs
// names a per-process file or /proc/kcore.
func procPathDenied(real string) bool {
	_, parts := components(real)
	for _, c := range parts {
		if c == "kcore" || isDigits(c) {
			return true
		}
	}
	return false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
