package sandbox

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// signalTree sends sig to a launched command that has no reaper to pass
// it on (see Process.Signal).
func signalTree(backend string, pid int, group bool, sig syscall.Signal) error {
	switch backend {
	case "bwrap":
		// The reaper, bwrap, then bwrap as the namespace's init, then the
		// command and what it started.
		var err error
		for _, p := range descendants(pid, 2) {
			if e := syscall.Kill(p, sig); e != nil && e != syscall.ESRCH {
				err = e
			}
		}
		return err
	}
	if group {
		return syscall.Kill(-pid, sig)
	}
	return syscall.Kill(pid, sig)
}

// descendants lists the processes beneath pid deeper than skip levels
// (pid itself is level 0).
func descendants(pid, skip int) []int {
	var out []int
	var walk func(p, depth int)
	walk = func(p, depth int) {
		if depth > skip {
			out = append(out, p)
		}
		tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(p) + "/task")
		for _, t := range tasks {
			data, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/task/" + t.Name() + "/children")
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(data)) {
				if c, err := strconv.Atoi(f); err == nil {
					walk(c, depth+1)
				}
			}
		}
	}
	walk(pid, 0)
	return out
}
