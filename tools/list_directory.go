package tools

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/cordonhq/cordon/fsfence"
)

// ListDirectoryInput are the list_directory tool's arguments.
type ListDirectoryInput struct {
	Path  string `json:"path,omitempty" jsonschema:"Directory to list. Default: the workspace."`
	Depth int    `json:"depth,omitempty" jsonschema:"How deep to recurse. Default 1." schema:"minimum=1,maximum=MaxListDepth"`
}

// ListDirectoryOutput is the list_directory tool's structuredContent.
type ListDirectoryOutput struct {
	Path      string      `json:"path"`
	Entries   []ListEntry `json:"entries"`
	Truncated bool        `json:"truncated"`
}

// The types of a list_directory entry, the output schema's enum.
const (
	entryFile    = "file"
	entryDir     = "dir"
	entrySymlink = "symlink"
	entryOther   = "other"
)

// Limits of list_directory.
const (
	MaxListDepth   = 5
	MaxListEntries = 1000
)

// ListEntry is one entry of a listing: its path relative to the listed
// directory (slash-separated), its type (file, dir, symlink, other) and
// its size in bytes (0 but for files).
type ListEntry struct {
	Path string `json:"path"`
	Type string `json:"type" schema:"enum=EntryTypes"`
	Size int64  `json:"size"`
}

// ListDirectory lists a directory, recursively up to depth levels, in
// lexical order (a .git directory is listed, not entered). Entries the
// fence refuses (the read-deny list) are left out without a word, so a
// listing never reveals what it may not show.
func (tb *Toolbox) ListDirectory(ctx context.Context, call Call, in ListDirectoryInput) (*Result, *ToolError) {
	call = tb.pin(call)
	depth := in.Depth
	if depth == 0 {
		depth = 1
	}
	if depth < 1 || depth > MaxListDepth {
		return nil, invalid("depth must be between 1 and %d", MaxListDepth)
	}
	pol, dir, f, terr := tb.reading(call, in.Path, true)
	if terr != nil {
		return nil, terr
	}
	// The walk goes through directory handles (fsfence.Dir): each entry
	// costs one fstatat beneath its checked directory, not a check from
	// "/" of its whole path.
	root, err := f.OpenDir(dir)
	if err != nil {
		if fi, serr := f.Stat(dir); serr == nil && !fi.IsDir() {
			return nil, invalid("%s is a file, not a directory: use read_file to read it", dir)
		}
		return nil, fenceError(NameListDirectory, pol, dir, err)
	}
	defer root.Close()
	entries := []ListEntry{}
	truncated := false
	var list func(d *fsfence.Dir, rel string, level int) error
	list = func(d *fsfence.Dir, rel string, level int) error {
		des, err := d.ReadDir()
		if err != nil && level > 1 {
			return nil // gone since its parent was listed
		} else if err != nil {
			return err
		}
		for _, de := range des {
			if err := ctx.Err(); err != nil {
				return err
			}
			// The fence's own answer decides what is shown: ReadDir drops
			// read-deny names, Lstat refuses read-deny objects by identity.
			info, err := d.Lstat(de.Name())
			if err != nil {
				continue
			}
			if len(entries) == MaxListEntries {
				truncated = true
				return nil
			}
			e := ListEntry{Path: path.Join(rel, de.Name()), Type: entryType(info.Mode())}
			if e.Type == entryFile {
				e.Size = info.Size()
			}
			entries = append(entries, e)
			// A .git directory is shown but not entered: its objects would
			// fill the listing with nothing a model should read.
			if e.Type == entryDir && level < depth && de.Name() != ".git" {
				sub, err := d.OpenDir(de.Name())
				if err != nil {
					continue // refused or gone since it was listed
				}
				err = list(sub, e.Path, level+1)
				sub.Close()
				if err != nil {
					return err
				}
				if truncated {
					return nil
				}
			}
		}
		return nil
	}
	if err := list(root, "", 1); err != nil {
		if ctx.Err() != nil {
			return nil, errorf(CodeTimeout, "list_directory %s was cancelled", dir)
		}
		return nil, fenceError(NameListDirectory, pol, dir, err)
	}
	var b strings.Builder
	for _, e := range entries {
		switch e.Type {
		case entryDir:
			fmt.Fprintf(&b, "%s/\n", e.Path)
		case entryFile:
			fmt.Fprintf(&b, "%s\t%d\n", e.Path, e.Size)
		default:
			fmt.Fprintf(&b, "%s\t(%s)\n", e.Path, e.Type)
		}
	}
	if len(entries) == 0 {
		b.WriteString("(empty directory)\n")
	}
	if truncated {
		fmt.Fprintf(&b, "[listing cut at %d entries: list a subdirectory, or use a smaller depth]\n", MaxListEntries)
	}
	return &Result{Text: b.String(), Structured: structured(ListDirectoryOutput{Path: dir, Entries: entries, Truncated: truncated})}, nil
}

// entryType names a file mode's type as list_directory reports it.
func entryType(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return entryFile
	case m.IsDir():
		return entryDir
	case m&fs.ModeSymlink != 0:
		return entrySymlink
	}
	return entryOther
}
