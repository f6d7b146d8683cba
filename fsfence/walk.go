package fsfence

import (
	"io/fs"
	"path/filepath"
)

// FS returns a read-only [fs.FS] rooted at the absolute directory dir, for
// glob and grep ([fs.WalkDir], [fs.Glob], [fs.ReadFile]). Every Open,
// ReadDir and Stat goes through the full read check, so a walk never lists
// or reads a read-deny path, however it is reached. Symlinks are followed on
// Open and Stat (and checked where they lead); [fs.WalkDir] does not descend
// into them.
func (f *Fence) FS(dir string) (fs.FS, error) {
	p, err := cleanAbs(dir)
	if err != nil {
		return nil, pathErr("fs", dir, err)
	}
	return fenceFS{f: f, dir: p}, nil
}

type fenceFS struct {
	f   *Fence
	dir string
}

var (
	_ fs.ReadDirFS  = fenceFS{}
	_ fs.StatFS     = fenceFS{}
	_ fs.ReadLinkFS = fenceFS{}
)

func (s fenceFS) abs(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return filepath.Join(s.dir, filepath.FromSlash(name)), nil
}

// Open opens a regular file or a directory (the latter so that fs.WalkDir
// and fs.Glob work on any fs.FS code path).
func (s fenceFS) Open(name string) (fs.File, error) {
	p, err := s.abs("open", name)
	if err != nil {
		return nil, err
	}
	file, _, err := s.f.open("open", p, true)
	if err != nil {
		return nil, err
	}
	return file, nil
}

func (s fenceFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := s.abs("readdir", name)
	if err != nil {
		return nil, err
	}
	return s.f.ReadDir(p)
}

func (s fenceFS) Stat(name string) (fs.FileInfo, error) {
	p, err := s.abs("stat", name)
	if err != nil {
		return nil, err
	}
	return s.f.Stat(p)
}

// WalkDir walks the tree at the absolute path root like
// [path/filepath.WalkDir], with absolute paths, in lexical order. The root
// is checked as a path (a symlink there is followed); below it the walk
// goes through [Dir] handles, so every directory is checked in full when
// it is entered, every name is looked up beneath its checked parent, and
// symlinks are reported, never followed. A directory the fence refuses to
// list reaches fn a second time with an error matching [ErrDenied]; return
// nil to skip it and go on (what glob and grep want), or the error to
// stop. Unlike [Dir.ReadDir], the walk shows read-deny names (as the shell
// would); an entry's Info is [Dir.Lstat], valid during the call to fn.
func (f *Fence) WalkDir(root string, fn fs.WalkDirFunc) error {
	p, err := cleanAbs(root)
	if err != nil {
		return fn(root, nil, pathErr("walk", root, err))
	}
	info, err := f.Stat(p)
	if err != nil {
		err = fn(p, nil, err)
	} else {
		err = f.walkDir(nil, p, fs.FileInfoToDirEntry(info), fn)
	}
	if err == fs.SkipDir || err == fs.SkipAll {
		return nil
	}
	return err
}

// walkDir is fs.WalkDir's step: parent is nil for the root.
func (f *Fence) walkDir(parent *Dir, p string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(p, d, nil); err != nil || !d.IsDir() {
		if err == fs.SkipDir && d.IsDir() {
			err = nil
		}
		return err
	}
	var dir *Dir
	var err error
	if parent == nil {
		dir, err = f.OpenDir(p)
	} else {
		dir, err = parent.OpenDir(d.Name())
	}
	var entries []fs.DirEntry
	if err == nil {
		defer dir.Close()
		entries, err = dir.readDir(false)
	}
	if err != nil {
		// Second call, to report the error.
		if err = fn(p, d, err); err != nil {
			if err == fs.SkipDir {
				err = nil
			}
			return err
		}
	}
	for _, e := range entries {
		if err := f.walkDir(dir, filepath.Join(p, e.Name()), e, fn); err != nil {
			if err == fs.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}

func (s fenceFS) Lstat(name string) (fs.FileInfo, error) {
	p, err := s.abs("lstat", name)
	if err != nil {
		return nil, err
	}
	return s.f.Lstat(p)
}

func (s fenceFS) ReadLink(name string) (string, error) {
	p, err := s.abs("readlink", name)
	if err != nil {
		return "", err
	}
	return s.f.ReadLink(p)
}
