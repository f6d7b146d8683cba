package fsfence

import (
	"errors"
	"fmt"
	"io/fs"
)

// ErrDenied is matched (errors.Is) by every refusal of the fence, so callers
// can turn it into the sandbox denial marker without knowing the reason.
var ErrDenied = errors.New("access denied by the file fence")

// ErrInvalidPath is matched by errors for paths the fence cannot reason
// about at all: empty, containing a NUL byte, or relative. They are the
// caller's bug or the model's bad input, not a denial.
var ErrInvalidPath = errors.New("invalid path")

// ErrNotRegular is matched when a file operation meets something that is not
// a regular file (a directory, device, FIFO or socket).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is matched when [Fence.Edit] meets a file larger than
// [MaxEditSize].
var ErrTooLarge = errors.New("file too large")

// ErrModified is matched when the file changed on disk between the read and
// the write of [Fence.Edit]; the edit is not applied.
var ErrModified = errors.New("file was modified during the edit")

// Reason says why the fence refused an operation.
type Reason string

// Reasons for a [DeniedError]. They are phrases, so that an error message
// reads "write /x: denied: outside the writable roots".
const (
	ReasonOutsideRoots     Reason = "outside the writable roots"
	ReasonSymlinkEscape    Reason = "a symlink leads outside the writable roots"
	ReasonProtected        Reason = "protected path"
	ReasonReadDeny         Reason = "on the read-deny list"
	ReasonMagicLink        Reason = "goes through a /proc magic link or a symlink loop"
	ReasonProcfs           Reason = "per-process /proc files are never readable"
	ReasonRootNotCanonical Reason = "writable root is not canonical (it contains a symlink)"
	ReasonRoot             Reason = "a writable root itself cannot be removed"
)

// DeniedError is the fence's refusal. It matches [ErrDenied]; Err, when set,
// is the underlying system error (for example ELOOP for a magic link).
type DeniedError struct {
	Op     string // the fence operation: "read", "write", "mkdir", ...
	Path   string // the path as the caller gave it
	Reason Reason // why
	Entry  string // the protected, read-deny or root entry involved, if any
	Err    error  // underlying error, if any
}

// Error reads "OP PATH: denied: REASON (ENTRY)".
func (e *DeniedError) Error() string {
	msg := fmt.Sprintf("%s %s: denied: %s", e.Op, e.Path, e.Reason)
	if e.Entry != "" {
		msg += " (" + e.Entry + ")"
	}
	return msg
}

// Is makes every DeniedError match [ErrDenied].
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// Unwrap returns the underlying system error, if any.
func (e *DeniedError) Unwrap() error { return e.Err }

func denied(op, path string, reason Reason, entry string) *DeniedError {
	return &DeniedError{Op: op, Path: path, Reason: reason, Entry: entry}
}

// pathErr wraps an ordinary (non-denial) error the way the os package does,
// so errors.Is(err, fs.ErrNotExist) and friends keep working.
func pathErr(op, path string, err error) error {
	var de *DeniedError
	if errors.As(err, &de) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return err
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// bug marks errors that mean the fence's own invariants broke, so they read
// differently from the caller's mistakes.
func bug(format string, args ...any) error {
	return fmt.Errorf("fsfence: internal error: "+format, args...)
}
