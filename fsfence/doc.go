// Package fsfence is the in-process path fence of cordon's file tools
// (read_file, write_file, edit_file, list_directory, glob, grep).
//
// A [Fence] is built once from a [Config] — the writable roots, the
// protected paths and the read-deny list of the session's execution policy —
// and is then immutable and safe for concurrent use. (It keeps the entries
// as the file system resolved them between calls, but every call first
// looks again, with one lstat per path on the entries' way, and resolves
// them afresh when anything there changed: a call sees the entries as they
// are when it runs.) Every operation takes an
// absolute path (the caller joins relative tool arguments with the workspace
// root first; a relative path is an [ErrInvalidPath] error), and every
// refusal by the fence is a [*DeniedError] that matches [ErrDenied].
//
// # Writes
//
// A write is allowed only beneath a writable root and never on, under or by
// creating a protected or read-deny path. The absolute path is cleaned
// lexically (".." is resolved by [path/filepath.Clean], not by the file
// system), mapped onto the longest writable root whose path contains it
// component by component (so /ws-evil is not inside /ws), and the rest is
// walked one component at a time relative to a directory handle of that
// root. On Linux each step is openat2(2) with RESOLVE_BENEATH,
// RESOLVE_NO_SYMLINKS and RESOLVE_NO_MAGICLINKS: the kernel never follows a
// link for the fence. A symlink met on the way is read through its own
// handle and followed by the fence itself: its target is joined to the
// kernel's view of the directory holding it and the resulting path goes
// through the whole check again from the top, so a symlink (or one swapped
// in by a concurrent rename) that leads outside the roots, or onto a
// protected path, is refused rather than followed. Parent directories are
// created with mkdirat relative to the handle of their parent, each one
// checked before it is made.
//
// Protection is decided three ways, any one of which refuses: the lexical
// path (so a protected path that is itself a symlink, or passes through one,
// is refused, never followed); the kernel's view of the resolved parent
// directory handle (/proc/self/fd) plus the final name, compared with the
// entries and with the entries' own symlink-resolved forms (so an alias
// inside the root cannot reach a protected path by another name); and the
// device and inode of the parent directory, of each of its ancestors and of
// an existing target, compared with those of the entries (so a bind mount of
// a protected directory is caught as well). Read-deny paths are
// never writable either.
//
// Writes are atomic: the data goes to an anonymous O_TMPFILE (or a
// ".cordon-*.tmp" file where the file system lacks O_TMPFILE) created through
// the parent directory's handle, is fsynced, gets the existing file's
// permission bits (0644 for a new file; setuid, setgid and sticky bits are
// dropped) and owner (best effort), and is renamed over the target with
// renameat relative to the same handle; the directory is then fsynced. A
// crash leaves either the old or the new content, never a mix.
//
// # Reads
//
// Reads are allowed everywhere except the read-deny list. The path is
// opened with openat2 RESOLVE_NO_MAGICLINKS and O_PATH (ordinary symlinks
// are followed; /proc/self/root, /proc/PID/cwd, /proc/self/fd/N and other
// magic links are refused), and the opened handle — not the string — is
// checked: the kernel's view of its path against the entries, and the device
// and inode of the file, of its directory and of every ancestor against the
// entries. Only then is the same inode reopened for reading through
// /proc/self/fd, so what was checked is what is read. Two shortcuts leave
// every view in place: a path opened without following any symlink is its
// own kernel view, and the identities of a directory's ancestors are
// remembered by its kernel path and mount for as long as the entries
// resolve as they did (see lineageCache for why that misses nothing).
// Per-process /proc
// files (/proc/PID/..., which include the server's own environ and memory)
// and /proc/kcore are refused as well.
//
// # Walks
//
// Checking every file of a large tree from "/" costs far more than reading
// it, so tree walks (glob, grep, [Fence.WalkDir]) go through [Dir] handles
// instead: [Fence.OpenDir] checks one directory in full, and a [Dir] then
// opens one name at a time beneath its own handle (on Linux openat2 with
// RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS and RESOLVE_NO_MAGICLINKS, and
// O_NOFOLLOW), so a child is never a symlink and never elsewhere. Each
// child is compared with the entries by its path and the kernel's view
// (its directory's plus its name) and by its own device and inode; its
// ancestors are its directory's, already compared. Each directory entered
// looks at the entries and at its own kernel view again. Names that are
// read-deny entries are left out of a Dir's listings. [Dir] explains in
// full why this is as strong as the path check. [Fence.FS] serves the
// [io/fs] functions by path, each call with the full check.
//
// # Limits
//
// Like [os.Root], the fence constrains where its own operations resolve; it
// is not a sandbox for other processes, and it does not prevent:
//
//   - A hard link to a denied file that was created earlier (by the user or
//     before the session) is caught only when the read-deny entry names that
//     file itself (for example ~/.netrc): the kernel has no inode-to-path
//     lookup, so a link to a file inside a denied directory (for example
//     ~/.ssh/id_rsa) reads as an ordinary file. The same holds for a bind
//     mount of such a single file. Making either needs access to the
//     source, which the OS backend denies to the agent.
//   - Mount points inside a writable root are part of it: a directory that
//     the user or an administrator bind-mounted there from elsewhere is
//     writable like the rest (a bind mount of a protected or read-deny
//     directory is recognised by identity, but a protected path that does
//     not exist yet, under a bind-mounted alias of its parent, is not).
//   - Replacing a file replaces the name, as every atomic save does: other
//     hard links to the old inode keep the old content.
//   - Concurrent renames by another process: a directory that another
//     process moves after the fence resolved it takes the write with it
//     (the handle follows the inode, exactly as with [os.Root]); in
//     particular, moving an already resolved directory into a protected
//     place is not detected. Every step still resolves beneath a root, so a
//     write never lands outside the roots because of a symlink swap.
//   - A [Dir] is the directory that was checked, wherever it is later
//     moved: one moved into a read-deny directory after it was opened (which
//     needs write access there) still serves its files through the open
//     handle, though no directory below it can be entered any more. Files
//     reached through a Dir are checked against the entries as of its
//     opening; each directory entered looks at them again.
//   - Entries are compared as they are at the time of each call, case
//     insensitively (fail closed on case-insensitive file systems);
//     Unicode normalisation differences (macOS NFD) are not folded.
//   - A writable root must be canonical: a root whose path contains a symlink
//     is refused rather than followed, and a root that does not exist
//     matches nothing.
//   - Linux needs openat2 (kernel 5.6 or later) and procfs mounted at /proc;
//     without them [New] or each call fails closed.
//
// On other platforms writes are confined by [os.Root] (Go's traversal
// resistant handle; see its documentation for the races it tolerates on
// each platform), the kernel's view of a handle is approximated by the path
// the fence walked (every component of which it checked not to be a
// symlink), and reads are checked by path ([path/filepath.EvalSymlinks]) and
// by identity ([os.SameFile]) after opening, which narrows but does not
// close the window between check and use. There are no magic links to
// refuse there.
package fsfence
