//go:build unix

package sandbox

import (
	"fmt"
	"os"
	"syscall"
)

// soleOwnName checks that f is the user's own file and has no other name.
func soleOwnName(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return fmt.Errorf("%s: no owner to check", f.Name())
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s belongs to another user", f.Name())
	case st.Nlink > 1:
		return fmt.Errorf("%s has other names (hard links)", f.Name())
	}
	return nil
}
