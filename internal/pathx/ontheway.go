package pathx

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FileOnTheWay returns the first file (not a directory, not a symlink)
// between base and p, or p when there is none. Such a file is what the
// tool that reads p reads instead: Jujutsu's .jj/repo is a file naming
// the repository elsewhere when the workspace is not the repository's
// first, and its config.toml is found there. It is protected in p's
// place, so that a command cannot point it elsewhere. A file as the
// name's first component stands for nothing (a kernel tree's .config is
// not ~/.config): then it returns "", and the name is left to the audit,
// which sets it aside if a command makes it (as the file tools' rule,
// fsfence).
func FileOnTheWay(base, p string) string {
	rel, ok := RelUnder(base, p)
	if !ok {
		return p
	}
	cur := base
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, part := range parts[:len(parts)-1] {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		switch {
		case err != nil || fi.Mode()&fs.ModeSymlink != 0:
			return p // missing, or a symlink (protect.go refuses those)
		case !fi.IsDir() && i == 0:
			return "" // a kernel tree's .config file is not ~/.config
		case !fi.IsDir():
			return cur
		}
	}
	return p
}
