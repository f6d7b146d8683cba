//go:build linux

package fsfence

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// fileID is a file's identity: what a second name for the same file (a hard
// link, a bind mount, a symlink alias) still shares with the first.
type fileID struct{ dev, ino uint64 }

func (a fileID) same(b fileID) bool { return a == b }

func idOf(st *unix.Stat_t) fileID { return fileID{uint64(st.Dev), uint64(st.Ino)} } //nolint:unconvert // Dev is 32-bit on some ports

// fileInfoID is the identity of a file already stat'ed through the os package.
func fileInfoID(fi fs.FileInfo) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{uint64(st.Dev), uint64(st.Ino)} //nolint:unconvert
	}
	return fileID{}
}

// statID is the identity of what p names now, following symlinks: an entry
// that is a symlink protects (or hides) what it points to.
func statID(p string) (fileID, bool) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return fileID{}, false
	}
	return idOf(&st), true
}

// lookPath looks at p without following it, for [resolveEntry] and the
// validation of cached entries. A symlink's target is read by name right
// after the lstat; if the link is swapped in between, the device and inode
// recorded are the old link's and the next validation sees the new one.
func lookPath(p string) pathState {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return pathState{kind: kindMissing}
	}
	s := pathState{id: idOf(&st)}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		s.kind = kindDir
	case unix.S_IFLNK:
		target, err := os.Readlink(p)
		if err != nil {
			return pathState{kind: kindMissing}
		}
		s.kind, s.target = kindSymlink, target
	case unix.S_IFREG:
		s.kind = kindFile
	default:
		s.kind = kindOther
	}
	return s
}

// platformInit proves, once per fence, that the two kernel facilities the
// fence stands on exist. Without them every call would fail anyway; failing
// in New says why once and clearly.
func platformInit() error {
	var sfs unix.Statfs_t
	if err := unix.Statfs("/proc", &sfs); err != nil || sfs.Type != unix.PROC_SUPER_MAGIC {
		return errors.New("fsfence: procfs is not mounted at /proc (needed for the kernel's view of open handles)")
	}
	fd, err := openat2(unix.AT_FDCWD, "/", unix.O_PATH|unix.O_DIRECTORY, unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return fmt.Errorf("fsfence: openat2 unavailable (Linux 5.6 or later is required): %w", err)
	}
	unix.Close(fd)
	return nil
}

// openat2 retries EAGAIN, which the kernel returns for RESOLVE_BENEATH-style
// lookups when a concurrent rename may have moved something under it: the
// retry is a fresh, fully checked lookup.
func openat2(dirfd int, path string, flags int, resolve uint64) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags) | unix.O_CLOEXEC, Resolve: resolve}
	for i := 0; ; i++ {
		fd, err := unix.Openat2(dirfd, path, &how)
		if (err == unix.EAGAIN || err == unix.EINTR) && i < 128 {
			continue
		}
		return fd, err
	}
}

// beneath is the resolution used for every step inside a root: the kernel
// follows no link of any kind and cannot leave the directory handle.
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// fdPath is the kernel's view of where an open handle is now.
func fdPath(fd int) (string, error) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(p, "/") {
		// Not a file-system path (or one outside our root): nothing we
		// could compare, so nothing we may allow.
		return "", bug("handle has no path in this mount namespace: %q", p)
	}
	if strings.HasSuffix(p, " (deleted)") {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err == nil && st.Nlink == 0 {
			return "", syscall.ENOENT
		}
	}
	return p, nil
}

// lineage returns the identity of the directory behind fd and of every
// ancestor up to "/", walking ".." from the handle itself so that it follows
// the real tree (through mount points), not a path string. Each level is one
// stat of "..", "../..", … relative to the handle, rather than an open, a
// stat and a close of each ancestor (a fenced open walks the whole
// lineage, and system calls are most of its cost); every anchorEvery
// levels the walk opens the ancestor it reached and goes on from there, so
// that no path grows long.
func lineage(fd int) ([]fileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	ids := make([]fileID, 1, 16)
	ids[0] = idOf(&st)
	from, owned := fd, -1
	defer func() {
		if owned >= 0 {
			unix.Close(owned)
		}
	}()
	up := 0 // levels above from
	for range maxDepth {
		if up == anchorEvery {
			pfd, err := unix.Openat(from, dotdots(up), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return nil, err
			}
			if owned >= 0 {
				unix.Close(owned)
			}
			owned, from, up = pfd, pfd, 0
		}
		up++
		if err := unix.Fstatat(from, dotdots(up), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return nil, err
		}
		id := idOf(&st)
		if id == ids[len(ids)-1] {
			return ids, nil // ".." of "/" is "/"
		}
		ids = append(ids, id)
	}
	return nil, bug("directory nesting deeper than %d", maxDepth)
}

// anchorEvery is how many levels lineage climbs by one ".." path.
const anchorEvery = 32

// upPaths holds "../" anchorEvery times; dotdots slices it.
var upPaths = strings.Repeat("../", anchorEvery)

// dotdots is the relative path n levels up: "..", "../..", …
func dotdots(n int) string { return upPaths[:3*n-1] }

// dirHandle is an O_PATH handle on a directory inside a writable root.
type dirHandle struct{ fd int }

func (h *dirHandle) close() {
	if h != nil && h.fd >= 0 {
		unix.Close(h.fd)
		h.fd = -1
	}
}

// openRoot opens a writable root. RESOLVE_NO_SYMLINKS holds the caller to
// its promise that roots are canonical: a root reached through a symlink
// (or swapped for one) could be anywhere.
func openRoot(path string) (*dirHandle, error) {
	fd, err := openat2(unix.AT_FDCWD, path, unix.O_PATH|unix.O_DIRECTORY, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	switch err {
	case nil:
		return &dirHandle{fd}, nil
	case unix.ENOENT, unix.ENOTDIR:
		return nil, errRootMissing
	case unix.ELOOP:
		return nil, errRootNotCanonical
	}
	return nil, err
}

func (h *dirHandle) realPath() (string, error) { return fdPath(h.fd) }

func (h *dirHandle) lineage() ([]fileID, error) { return lineage(h.fd) }

// child looks at one name in the directory without following it. A symlink
// is opened as itself (O_PATH|O_NOFOLLOW) and read through that handle, so
// the target returned is the target of the link that was looked at.
func (h *dirHandle) child(name string) (entry, error) {
	fd, err := openat2(h.fd, name, unix.O_PATH|unix.O_NOFOLLOW, beneath)
	if err == unix.ENOENT {
		return entry{kind: kindMissing}, nil
	}
	if err != nil {
		return entry{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return entry{}, err
	}
	e := entry{info: infoOf(&st)}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		e.kind, e.dir = kindDir, &dirHandle{fd}
		return e, nil
	case unix.S_IFLNK:
		e.kind = kindSymlink
		e.target, err = readlinkFD(fd)
	case unix.S_IFREG:
		e.kind = kindFile
	default:
		e.kind = kindOther
	}
	unix.Close(fd)
	return e, err
}

func infoOf(st *unix.Stat_t) entryInfo {
	return entryInfo{
		perm:  fs.FileMode(st.Mode & 0o777),
		id:    idOf(st),
		size:  st.Size,
		mtime: st.Mtim.Nano(),
		uid:   int(st.Uid),
		gid:   int(st.Gid),
	}
}

func readlinkFD(fd int) (string, error) {
	for size := 256; size <= 1<<16; size *= 4 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(fd, "", buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
	return "", syscall.ENAMETOOLONG
}

func (h *dirHandle) mkdir(name string) error {
	err := unix.Mkdirat(h.fd, name, 0o755)
	if err == unix.EEXIST {
		return nil // whatever is there is looked at again by the caller
	}
	return err
}

// openFile opens a regular file in the directory for reading, following
// nothing. O_NONBLOCK keeps a FIFO swapped in after the check from
// blocking the server; the caller verifies it got the inode it checked.
func (h *dirHandle) openFile(name string) (*os.File, error) {
	fd, err := openat2(h.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, beneath)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

func (h *dirHandle) remove(name string, dir bool) error {
	flags := 0
	if dir {
		flags = unix.AT_REMOVEDIR
	}
	return unix.Unlinkat(h.fd, name, flags)
}

// syncDir makes a rename or a mkdir in the directory durable.
func (h *dirHandle) syncDir() error {
	fd, err := unix.Openat(h.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fsync(fd)
}
