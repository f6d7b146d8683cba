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
	file, err := s.f.open("open", p, true)
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
// [path/filepath.WalkDir], with absolute paths, through [Fence.FS]. A
// directory the fence refuses to list reaches fn a second time with an
// error matching [ErrDenied]; return nil to skip it and go on (what glob
// and grep want), or the error to stop.
func (f *Fence) WalkDir(root string, fn fs.WalkDirFunc) error {
	fsys, err := f.FS(root)
	if err != nil {
		return fn(root, nil, err)
	}
	base := filepath.Clean(root)
	return fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		return fn(filepath.Join(base, filepath.FromSlash(name)), d, err)
	})
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
