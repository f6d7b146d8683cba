package fsfence

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// Dir is a directory that passed the full read check, held open, through
// which a tree walk reaches its children without checking every file from
// "/" again. [Fence.OpenDir] checks the first directory exactly as
// [Fence.ReadDir] does; [Dir.ReadDir], [Dir.OpenFile], [Dir.OpenDir] and
// [Dir.Lstat] then take one name in it at a time and never follow a
// symlink. A Dir is safe for concurrent use; Close waits for the calls in
// progress, and every later call fails with [fs.ErrClosed].
//
// # Why a child needs less checking than a path
//
// The full check of a path (see the package doc) has three views: the
// lexical path, the kernel's view of the opened handle, and the device and
// inode of the object and of each of its ancestors. Its cost is in getting
// the second and third from nothing: resolving from "/", reading the
// handle's path from /proc, and walking ".." to the root. A child of a
// checked directory D gets them from D instead:
//
//   - How the child is reached. On Linux it is opened relative to D's
//     handle with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
//     RESOLVE_NO_MAGICLINKS) and O_NOFOLLOW, and the name is one component
//     (no "/", not "." or ".."). So the kernel looks the name up in D's
//     inode and nowhere else, follows no link of any kind, not even in the
//     final component, and cannot leave D: the object opened is the entry
//     of that name in D at the moment of the open (or whatever is mounted on
//     it, which the kernel's view and the identity below cover). A name
//     swapped for a symlink between the listing and the open is refused,
//     never followed. (Elsewhere: an [os.Root] on D, with an lstat before
//     and an identity comparison after the open; see there for its races.)
//   - The kernel's view. The child's path as the kernel would report it is
//     D's, joined with the name: a lookup of one component beneath D
//     gives a dentry whose parent is D (a mount point included: its path
//     is the mount point's). D's view was taken when D was checked. Both
//     the child's path as the caller names it (D's path plus the name) and
//     this view are compared with the entries, as given and as resolved.
//   - The identities. The object's own device and inode are compared with
//     the entries' (a hard link to a denied file named in the list, such as
//     ~/.netrc; a bind mount of a denied directory, whose mount root has
//     the directory's device and inode). Its ancestors are D and D's
//     ancestors, whose identities were compared when D was checked: ".."
//     of an entry found in D is D, and ".." of a mount root found in D is
//     D too, so walking ".." from the child would visit exactly those.
//
// What this does not see, and why that is no weaker than the path check:
//
//   - D (or an ancestor) renamed after D was checked. The handle follows
//     the inode, so the walk keeps listing and reading the directory that
//     was checked, not whatever now has its name: a directory swapped for a
//     symlink to a denied one leaves the walk where it was. The only thing
//     that could change is the kernel's view of D's place, if D were
//     moved into a denied directory; doing that needs write access to the
//     denied directory, and its own contents were readable a moment
//     before. The package doc lists the same limit for writes, and the
//     path check has the same window between its check and the read. Each
//     child directory re-reads its kernel view, and when that is not its
//     parent's view plus its name (something was moved), walks ".." in
//     full as the path check does.
//   - Entries that change while D is open. Opening a directory (Fence.OpenDir
//     or Dir.OpenDir) looks at the entries again, as every path call does
//     (see entries.go), and compares the new directory's path, kernel view
//     and whole ancestry with them; the files and listings of that
//     directory are checked against the entries as of its opening. A walk
//     thus sees a change to the entries at the next directory it enters,
//     not only at the next call.
//
// Listings leave out the names that are on, or under, a read-deny entry
// by path (they are invisible); a name that is denied only by identity (a
// hard link or bind mount) is listed, but opening it, entering it or
// looking at its Info is refused with a [*DeniedError].
type Dir struct {
	f       *Fence
	h       dirFD
	path    string   // as the caller names it: cleaned and absolute
	real    string   // the kernel's view when it was checked
	lineage []fileID // the directory and every ancestor
	// m is the entries as of the opening. path and real are on or under
	// none of its paths, so a child can only be denied by path when it is
	// an entry itself: its name is one of denyNames.
	m         *matcher
	denyNames []string

	mu     sync.RWMutex
	closed bool
}

// OpenDir checks the directory path for reading as [Fence.ReadDir] does
// (following symlinks on the way, as path calls do) and returns it open.
// The caller must Close it.
func (f *Fence) OpenDir(path string) (*Dir, error) {
	p, err := cleanAbs(path)
	if err != nil {
		return nil, pathErr("opendir", path, err)
	}
	m := f.reads.matcher()
	t, err := f.checkReadClean("opendir", path, p, m)
	if err != nil {
		return nil, err
	}
	if t.kind != kindDir {
		t.close()
		return nil, pathErr("opendir", path, syscall.ENOTDIR)
	}
	h, err := dirFromTarget(t) // takes t, whatever happens
	if err != nil {
		return nil, pathErr("opendir", path, err)
	}
	return newDir(f, h, p, t.realPath, t.lineage, m), nil
}

func newDir(f *Fence, h dirFD, path, real string, lineage []fileID, m *matcher) *Dir {
	d := &Dir{f: f, h: h, path: path, real: real, lineage: lineage, m: m}
	pv, pp := components(path)
	rv, rp := components(real)
	for _, mp := range m.paths {
		if len(mp.parts) == 0 {
			continue
		}
		head, last := mp.parts[:len(mp.parts)-1], mp.parts[len(mp.parts)-1]
		if (len(head) == len(pp) && within(pv, pp, mp.vol, head)) || (len(head) == len(rp) && within(rv, rp, mp.vol, head)) {
			d.denyNames = append(d.denyNames, last)
		}
	}
	return d
}

// Path is the directory's path as the caller named it, cleaned: the path
// given to [Fence.OpenDir], joined with the names given to [Dir.OpenDir].
func (d *Dir) Path() string { return d.path }

// Close releases the directory's handle, after the calls in progress.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return &fs.PathError{Op: "close", Path: d.path, Err: fs.ErrClosed}
	}
	d.closed = true
	d.h.close()
	return nil
}

// acquire holds the handle open for one call; release with d.mu.RUnlock.
func (d *Dir) acquire(op, name string) error {
	d.mu.RLock()
	if d.closed {
		d.mu.RUnlock()
		return &fs.PathError{Op: op, Path: d.join(name), Err: fs.ErrClosed}
	}
	return nil
}

func (d *Dir) join(name string) string {
	if name == "" {
		return d.path
	}
	if strings.HasSuffix(d.path, string(filepath.Separator)) {
		return d.path + name
	}
	return d.path + string(filepath.Separator) + name
}

// validName reports whether name is exactly one component of a path.
func validName(name string) bool {
	return name != "" && name != "." && name != ".." &&
		!strings.ContainsAny(name, "/\x00"+string(filepath.Separator)) && filepath.VolumeName(name) == ""
}

// checkName is the lexical part of every check of a child: the name must
// be one component, and the child must not be a read-deny entry by its
// path or by the kernel's view (only an entry itself can be: see denyNames).
func (d *Dir) checkName(op, name string) (string, error) {
	if !validName(name) {
		return "", &fs.PathError{Op: op, Path: d.join(name), Err: fmt.Errorf("%w: %q is not a name in a directory", ErrInvalidPath, name)}
	}
	p := d.join(name)
	if e, ok := d.deniedName(name); ok {
		return "", denied(op, p, ReasonReadDeny, e)
	}
	return p, nil
}

func (d *Dir) deniedName(name string) (string, bool) {
	for _, n := range d.denyNames {
		if strings.EqualFold(n, name) {
			// Report the entry, as the path check would.
			if e, ok := d.m.pathHit(d.join(name)); ok {
				return e, true
			}
			if e, ok := d.m.pathHit(filepath.Join(d.real, name)); ok {
				return e, true
			}
			return n, true // unreachable: denyNames came from these paths
		}
	}
	return "", false
}

// ReadDir lists the directory, sorted by name, leaving out the names that
// are read-deny entries (see [Dir]). The entries' Type comes from the
// listing; their Info is [Dir.Lstat], and fails once the Dir is closed.
func (d *Dir) ReadDir() ([]fs.DirEntry, error) {
	return d.readDir(true)
}

func (d *Dir) readDir(hide bool) ([]fs.DirEntry, error) {
	if err := d.acquire("readdir", ""); err != nil {
		return nil, err
	}
	defer d.mu.RUnlock()
	raw, err := d.h.list()
	out := make([]fs.DirEntry, 0, len(raw))
	for _, r := range raw {
		if !validName(r.name) {
			continue // no file system should list one; nothing could open it
		}
		if _, ok := d.deniedName(r.name); ok && hide {
			continue
		}
		out = append(out, &dirEntry{dir: d, name: r.name, typ: r.typ})
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	if err != nil {
		return out, pathErr("readdir", d.path, err)
	}
	return out, nil
}

// OpenFile opens the regular file name in the directory for reading. A
// symlink is not followed (the error matches [syscall.ELOOP]); anything
// else that is not a regular file is refused with [ErrNotRegular], and a
// FIFO does not block. The returned file's Name is Path joined with name.
func (d *Dir) OpenFile(name string) (*os.File, error) {
	if err := d.acquire("open", name); err != nil {
		return nil, err
	}
	defer d.mu.RUnlock()
	p, err := d.checkName("open", name)
	if err != nil {
		return nil, err
	}
	file, c, err := d.h.openFile(name, p)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	real := ""
	if c.procfs {
		real = filepath.Join(d.real, name)
	}
	if err := checkChild(d.m, "open", p, real, c, []fileID{c.id}); err != nil {
		file.Close()
		return nil, err
	}
	return file, nil
}

// OpenDir opens the directory name in the directory, checked as described
// at [Dir], with the entries looked at again. A symlink is not followed.
// The caller must Close the result; d may be closed before it.
func (d *Dir) OpenDir(name string) (*Dir, error) {
	if err := d.acquire("opendir", name); err != nil {
		return nil, err
	}
	defer d.mu.RUnlock()
	if !validName(name) {
		_, err := d.checkName("opendir", name)
		return nil, err
	}
	p := d.join(name)
	want := filepath.Join(d.real, name)
	// The entries as of now: the new directory's path, view and ancestry
	// are compared with them in full, as a path call would.
	m := d.f.reads.matcher()
	for _, q := range []string{p, want} {
		if e, ok := m.pathHit(q); ok {
			return nil, denied("opendir", p, ReasonReadDeny, e)
		}
	}
	h, c, err := d.h.openDir(name)
	if err != nil {
		return nil, pathErr("opendir", p, err)
	}
	real, lineage, err := h.place(want, c.id, d.lineage)
	if err == nil && real != want {
		if e, ok := m.pathHit(real); ok {
			err = denied("opendir", p, ReasonReadDeny, e)
		}
	}
	if err == nil {
		err = checkChild(m, "opendir", p, real, c, lineage)
	}
	if err != nil {
		h.close()
		return nil, pathErr("opendir", p, err)
	}
	return newDir(d.f, h, p, real, lineage, m), nil
}

// Lstat returns information about name in the directory without following
// it: a symlink describes itself. A read-deny name, or an object that is a
// read-deny entry by identity, is refused. On Linux the information comes
// from one fstatat beneath the handle and is not the os package's type
// ([os.SameFile] does not know it; its Sys is a *syscall.Stat_t all the
// same).
func (d *Dir) Lstat(name string) (fs.FileInfo, error) {
	if err := d.acquire("lstat", name); err != nil {
		return nil, err
	}
	defer d.mu.RUnlock()
	p, err := d.checkName("lstat", name)
	if err != nil {
		return nil, err
	}
	fi, id, err := d.h.lstat(name)
	if err != nil {
		return nil, pathErr("lstat", p, err)
	}
	if e, ok := d.m.idHit([]fileID{id}); ok {
		return nil, denied("lstat", p, ReasonReadDeny, e)
	}
	return fi, nil
}

// opened is what the platform layer learned about a child it opened.
type opened struct {
	id     fileID
	procfs bool  // the object is on procfs
	size   int64 // a regular file's size when it was opened
}

// checkChild is the rest of a child's check once it is open: the
// identities (the child's; for a new directory, its whole ancestry)
// against the entries, and per-process procfs files by the kernel's view
// real (needed only on procfs).
func checkChild(m *matcher, op, p, real string, c opened, ids []fileID) error {
	if e, ok := m.idHit(ids); ok {
		return denied(op, p, ReasonReadDeny, e)
	}
	if c.procfs && procPathDenied(real) {
		return denied(op, p, ReasonProcfs, "")
	}
	return nil
}

// rawEntry is one name of a listing and its type as the listing gave it.
type rawEntry struct {
	name string
	typ  fs.FileMode
}

// dirEntry is an entry of [Dir.ReadDir].
type dirEntry struct {
	dir  *Dir
	name string
	typ  fs.FileMode
}

func (e *dirEntry) Name() string               { return e.name }
func (e *dirEntry) IsDir() bool                { return e.typ.IsDir() }
func (e *dirEntry) Type() fs.FileMode          { return e.typ }
func (e *dirEntry) Info() (fs.FileInfo, error) { return e.dir.Lstat(e.name) }
func (e *dirEntry) String() string             { return fs.FormatDirEntry(e) }
