package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cordonhq/cordon/fsfence"
	"github.com/cordonhq/cordon/internal/pathx"
	"github.com/cordonhq/cordon/sandbox"
)

// fence builds the FS fence of one call from the same policy the OS backend
// gets, so the file tools and bash can never disagree about where a call may
// read or write. A danger-full-access policy needs no special case: its
// writable root is "/", and cordon's own config and state stay protected.
func (tb *Toolbox) fence(call Call, pol sandbox.ExecutionPolicy) (*fsfence.Fence, *ToolError) {
	f, err := call.st.cache.fence(fenceConfig(pol))
	if err != nil {
		// Fail closed: without a fence no file tool may touch anything.
		return nil, &ToolError{Code: CodeUnavailable, Denied: true, Message: fmt.Sprintf(
			"%s\nthe file fence is unavailable: %v\nNothing was read or written.", DenialMarker(pol.Mode), err)}
	}
	return f, nil
}

// reading is where every tool that reads starts: the call's policy, the
// absolute path that its path argument names (the workspace for an empty
// one when defaultWorkspace is set), and the fence of that policy.
func (tb *Toolbox) reading(call Call, p string, defaultWorkspace bool) (sandbox.ExecutionPolicy, string, *fsfence.Fence, *ToolError) {
	pol, terr := tb.resolveToRead(call)
	if terr != nil {
		return pol, "", nil, terr
	}
	path, terr := toolPath(pol, p, defaultWorkspace)
	if terr != nil {
		return pol, "", nil, terr
	}
	f, terr := tb.fence(call, pol)
	if terr != nil {
		return pol, "", nil, terr
	}
	return pol, path, f, nil
}

func fenceConfig(pol sandbox.ExecutionPolicy) fsfence.Config {
	return fsfence.Config{WritableRoots: pol.WritableRoots, Protected: slices.Concat(pol.Protected, pol.GitDirs()),
		ReadDeny: pol.ReadDeny, ProtectedNames: slices.Concat(fileToolProtectedNames, pol.ProtectedNames), ProtectedFileNames: fileToolProtectedFileNames}
}

// fileToolProtectedFileNames are never the name of a file the file tools
// write: git takes a directory holding a HEAD (beside objects and refs)
// for a repository, and one assembled by write_file would be one that no
// audit saw made, trusted as the human's from the next call on.
var fileToolProtectedFileNames = []string{"HEAD"}

// fileToolProtectedNames are never written by the file tools, wherever
// they stand: git writes its own files (through bash, where the audit of
// new repositories sees what a command made), and a repository assembled
// by write_file — a gitdir with a hook, a .git pointer file — would be one
// that the human's git trusts and no audit saw made.
var fileToolProtectedNames = []string{".git"}

// toolPath turns a tool's path argument into an absolute, lexically cleaned
// path: absolute as given, or relative to the workspace root. An empty path
// is the workspace itself when defaultWorkspace is set (list_directory,
// glob, grep) and an error otherwise (read_file, write_file, edit_file).
// Nothing here decides access: ".." and symlinks are the fence's business,
// which resolves relative to directory handles.
func toolPath(pol sandbox.ExecutionPolicy, p string, defaultWorkspace bool) (string, *ToolError) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", invalid("path contains a NUL byte")
	}
	if p == "" {
		if defaultWorkspace {
			return pol.WorkspaceRoot, nil
		}
		return "", invalid("path is empty: give a file path (absolute, or relative to the workspace %s)", pol.WorkspaceRoot)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(pol.WorkspaceRoot, p)
	}
	return filepath.Clean(p), nil
}

// displayPath names a path for the model: relative to the workspace when
// inside it (shorter, and what a human types), absolute otherwise.
func displayPath(pol sandbox.ExecutionPolicy, abs string) string {
	if abs == pol.WorkspaceRoot {
		return "."
	}
	if pathx.Within(abs, pol.WorkspaceRoot) {
		if rel, err := filepath.Rel(pol.WorkspaceRoot, abs); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return abs
}

// fenceError turns an error of the fence (or of the file system behind it)
// into the tool error the model sees, naming the path and what to do.
func fenceError(tool string, pol sandbox.ExecutionPolicy, path string, err error) *ToolError {
	var de *fsfence.DeniedError
	switch {
	case errors.As(err, &de):
		what := fmt.Sprintf("%s refused %s: %s", tool, path, de.Reason)
		if de.Entry != "" && de.Entry != path {
			what += " (" + de.Entry + ")"
		}
		if readOnly[tool] {
			// No mode makes a read-deny path readable: no escalation hint.
			why := "[sandbox: no sandbox mode makes this path readable to cordon's tools]"
			if de.Reason == fsfence.ReasonReadDeny {
				why = "[sandbox: no sandbox mode makes this path readable to cordon's tools: it holds credentials or cordon's own state]"
			}
			return &ToolError{Code: CodeDenied, Denied: true, Message: DenialMarker(pol.Mode) + "\n" + what + "\n" + why}
		}
		if narrowedByClient(pol, de) {
			return &ToolError{Code: CodeDenied, Denied: true, Message: DenialMarker(pol.Mode) + "\n" + what + "\n" + narrowedLine(pol)}
		}
		return denial(tool, pol.Mode, what)
	case errors.Is(err, fsfence.ErrInvalidPath):
		return invalid("%s: invalid path %q: %v", tool, path, err)
	case errors.Is(err, fs.ErrNotExist):
		hint := ""
		if tool == NameEditFile {
			hint = "; use write_file to create a file"
		}
		return errorf(CodeNotFound, "%s does not exist (relative paths start at the workspace %s)%s", path, pol.WorkspaceRoot, hint)
	case errors.Is(err, fsfence.ErrTooLarge):
		return errorf(CodeTooLarge, "%s is larger than %s, the most %s handles in memory: use bash (sed, patch) for files this big", path, formatSize(fsfence.MaxEditSize), tool)
	case errors.Is(err, fsfence.ErrModified):
		return invalid("%s changed on disk while %s was working on it; nothing was written: read it again and retry", path, tool)
	case errors.Is(err, fsfence.ErrNotRegular), errors.Is(err, syscall.EISDIR):
		return invalid("%s is not a regular file (a directory, device, FIFO or socket): %s works on regular files only", path, tool)
	case errors.Is(err, syscall.ENOTDIR):
		return invalid("%s: a component of the path is not a directory", path)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return errorf(CodeRunnerFailed, "%s: no space left on the device; nothing was changed", path)
	}
	return errorf(CodeRunnerFailed, "%s %s failed: %v", tool, path, err)
}

// formatSize prints a byte count for humans and models alike.
func formatSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB (%d bytes)", float64(n)/float64(div), "KMGTPE"[exp], n)
}
