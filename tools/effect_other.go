//go:build !unix

package tools

import "io/fs"

// fileID is empty where FileInfo carries no file identity (Windows): the
// pin then rests on the resolved path, size, time and content.
func fileID(fs.FileInfo) string { return "" }
