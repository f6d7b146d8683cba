package sandbox

import (
	"fmt"
	"strconv"
)

// HelperArg is the hidden subcommand under which cordon re-executes itself
// to confine a command: it applies Landlock (when asked), drops
// privileges, installs the seccomp filter and execs the command. main()
// must dispatch to RunHelper before doing anything else, so the helper
// path stays lean.
const HelperArg = "__sandbox-helper"

// helperConfig is what the helper is told on its command line.
type helperConfig struct {
	landlockABI int      // 0: no Landlock (bwrap already confines the file system)
	writable    []string // Landlock write roots
	netDeny     bool
	// metadataDeny refuses chmod/chown/utimes/xattr changes: Landlock does
	// not govern them, so a read-only Landlock sandbox needs the filter.
	metadataDeny bool
	// ipcDeny refuses SysV IPC and POSIX message queues: without an IPC
	// namespace of its own (Landlock) they are the host's.
	ipcDeny bool
	// denyRead are the read-deny entries Landlock must keep unreadable:
	// file reads are granted on their siblings only (readgrants_linux.go).
	denyRead []string
	statusFD int
	// reapFD, when set, makes the helper stay as the command's parent and
	// child subreaper (there is no pid namespace to end it all): it kills
	// every descendant when the command exits, or when this control pipe
	// is closed (cordon kills the call, or is gone).
	reapFD int
	argv   []string
}

// args renders the config as the helper's command line (after HelperArg).
func (c helperConfig) args() []string {
	var a []string
	if c.landlockABI > 0 {
		a = append(a, "--landlock", strconv.Itoa(c.landlockABI))
	}
	for _, w := range c.writable {
		a = append(a, "--rw", w)
	}
	if c.netDeny {
		a = append(a, "--net-deny")
	}
	if c.metadataDeny {
		a = append(a, "--metadata-deny")
	}
	if c.ipcDeny {
		a = append(a, "--ipc-deny")
	}
	for _, d := range c.denyRead {
		a = append(a, "--deny-read", d)
	}
	if c.statusFD > 0 {
		a = append(a, "--status-fd", strconv.Itoa(c.statusFD))
	}
	if c.reapFD > 0 {
		a = append(a, "--reap-fd", strconv.Itoa(c.reapFD))
	}
	a = append(a, "--")
	return append(a, c.argv...)
}

// parseHelperArgs is deliberately hand-written: no flag package, no
// allocation-heavy parsing on the path of every confined command.
func parseHelperArgs(args []string) (helperConfig, error) {
	var c helperConfig
	for i := 0; i < len(args); i++ {
		next := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", args[i])
			}
			i++
			return args[i], nil
		}
		switch args[i] {
		case "--":
			c.argv = args[i+1:]
			if len(c.argv) == 0 {
				return c, fmt.Errorf("no command after --")
			}
			return c, nil
		case "--landlock", "--status-fd", "--reap-fd":
			flag := args[i]
			v, err := next()
			if err != nil {
				return c, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return c, fmt.Errorf("%s: bad value %q", flag, v)
			}
			switch flag {
			case "--landlock":
				c.landlockABI = n
			case "--status-fd":
				c.statusFD = n
			default:
				c.reapFD = n
			}
		case "--rw", "--deny-read":
			flag := args[i]
			v, err := next()
			if err != nil {
				return c, err
			}
			if flag == "--rw" {
				c.writable = append(c.writable, v)
			} else {
				c.denyRead = append(c.denyRead, v)
			}
		case "--net-deny":
			c.netDeny = true
		case "--metadata-deny":
			c.metadataDeny = true
		case "--ipc-deny":
			c.ipcDeny = true
		default:
			return c, fmt.Errorf("unknown helper argument %q", args[i])
		}
	}
	return c, fmt.Errorf("missing -- before the command")
}
