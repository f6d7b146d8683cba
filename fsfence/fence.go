package fsfence

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"slices"
)

// Fence checks and performs the file tools' file-system operations. Its
// configuration is immutable after [New]; it is safe for concurrent use.
type Fence struct {
	cfg Config
	// The entries as the file system resolves them, validated at every
	// call (see entries.go): read-deny for reads, protected and read-deny
	// together for writes.
	reads, writes entryCache
}

// New builds a fence. Every entry of cfg must be an absolute path (an
// [ErrInvalidPath] error otherwise). Entries need not exist. On Linux, New
// fails when openat2 or procfs is unavailable rather than building a fence
// that would fail every call.
func New(cfg Config) (*Fence, error) {
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	if err := platformInit(); err != nil {
		return nil, err
	}
	f := &Fence{cfg: c}
	f.reads.lists = [][]string{c.ReadDeny}
	f.writes.lists = [][]string{c.Protected, c.ReadDeny}
	return f, nil
}

// Config returns the cleaned configuration the fence enforces (a copy).
func (f *Fence) Config() Config {
	return Config{
		WritableRoots:      slices.Clone(f.cfg.WritableRoots),
		Protected:          slices.Clone(f.cfg.Protected),
		ReadDeny:           slices.Clone(f.cfg.ReadDeny),
		ProtectedNames:     slices.Clone(f.cfg.ProtectedNames),
		ProtectedFileNames: slices.Clone(f.cfg.ProtectedFileNames),
	}
}

// maxSymlinkHops bounds how many symlinks one write may follow, like the
// kernel's own limit of 40.
const maxSymlinkHops = 40

// maxDepth bounds the walk up from a directory to "/".
const maxDepth = 4096

// Internal outcomes of the platform layer, turned into the public errors
// by the callers, which know the operation and the caller's path.
var (
	errRootMissing      = errors.New("writable root does not exist")
	errRootNotCanonical = errors.New("writable root is not canonical")
	errMagicLink        = errors.New("magic link")
)

type kind int

const (
	kindMissing kind = iota
	kindDir
	kindFile
	kindSymlink
	kindOther
)

func (k kind) String() string {
	return [...]string{"missing", "directory", "regular file", "symlink", "special file"}[k]
}

// entryInfo is what the fence needs to know about a file it looked at.
type entryInfo struct {
	perm  fs.FileMode // permission bits only: setuid, setgid and sticky are never carried over
	id    fileID
	size  int64
	mtime int64 // nanoseconds
	uid   int   // -1 where the platform has no numeric owner
	gid   int
}

// sameState reports whether two looks at a file saw the same file with the
// same content as far as metadata can tell.
func (a entryInfo) sameState(b entryInfo) bool {
	return a.id.same(b.id) && a.size == b.size && a.mtime == b.mtime && a.perm == b.perm
}

// entry is one name in a directory, looked at without following it.
type entry struct {
	kind   kind
	info   entryInfo
	dir    *dirHandle // kindDir: an open handle the receiver must close
	target string     // kindSymlink: the link's target
}

// owner is the owner a rewritten file keeps.
type owner struct{ uid, gid int }

// tempName is the name of a temporary file in a target's directory. It is
// short (the target's own name may already be NAME_MAX long) and marked as
// cordon's, in case a crash leaves one behind where O_TMPFILE is missing.
func tempName() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return ".cordon-" + hex.EncodeToString(b[:]) + ".tmp"
}

// testHookBeforeCommit, when set by a test, runs after the temporary file
// is written and synced and before it replaces the target, to prove that a
// failure there leaves nothing behind. Never set outside tests.
var testHookBeforeCommit func() error

// testHookAfterWalk, when set by a test, runs after a write has walked to
// the parent directory and before the final checks, to stand in for a
// concurrent rename. Never set outside tests.
var testHookAfterWalk func()

// testForceNamedTemp, when set by a test, makes writes use a named
// temporary file as on file systems without O_TMPFILE.
var testForceNamedTemp bool
