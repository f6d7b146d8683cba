package helper

import (
	"fmt"
	"strconv"
)

// Arg is the hidden subcommand under which cordon re-executes itself
// to confine a command: it applies Landlock (when asked), drops
// privileges, installs the seccomp filter and execs the command. main()
// must dispatch to Run before doing anything else, so the helper
// path stays lean.
const Arg = "__sandbox-helper"

// Config is what the helper is told on its command line.
type Config struct {
	LandlockABI int      // 0: no Landlock (bwrap already confines the file system)
	Writable    []string // Landlock write roots
	NetDeny     bool
	// ProxyPort, for network restricted, is the egress proxy's loopback
	// port: the only TCP connect Landlock allows, and what the bridge
	// listens on. ProxySocket, under bwrap (its own network namespace),
	// is the proxy's unix socket that the bridge forwards that port to.
	ProxyPort   int
	ProxySocket string
	// Capture, with ProxySocket, also captures programs that ignore the
	// proxy (capture_linux.go).
	Capture bool
	// MetadataDeny refuses chmod/chown/utimes/xattr changes: Landlock does
	// not govern them, so a read-only Landlock sandbox needs the filter.
	MetadataDeny bool
	// IPCDeny refuses SysV IPC and POSIX message queues: without an IPC
	// namespace of its own (Landlock) they are the host's.
	IPCDeny bool
	// DenyRead are the read-deny entries Landlock must keep unreadable:
	// file reads are granted on their siblings only (readgrants_linux.go).
	DenyRead []string
	StatusFD int
	// ReapFD, when set, makes the helper stay as the command's parent and
	// child subreaper (there is no pid namespace to end it all): it kills
	// every descendant when the command exits, or when this control pipe
	// is closed (cordon kills the call, or is gone).
	ReapFD int
	// WardenFD, set by the reaper (warden_linux.go), is the pipe the
	// confining helper hands to the warden it starts: the warden kills
	// every process of the sandbox once the reaper closes its end.
	WardenFD int
	// Zygote makes the helper a warm sandbox's zygote (zygote_linux.go):
	// StatusFD is then its control socket, and there is no command. With
	// ReapFD, the reaper stays outside and the zygote it starts is confined.
	Zygote bool
	// Unconfined, with ReapFD, makes the reaper start the command itself,
	// with no confinement at all: an approved danger-full-access command
	// (or --no-sandbox) whose whole tree must still end with its call.
	Unconfined bool
	// PassFDs, with Unconfined, hands the command every descriptor the
	// reaper inherited, at the same numbers, but its control pipe: bwrap
	// beneath the reaper gets the helper and status descriptors it is
	// given, and the reaper reports nothing itself.
	PassFDs bool
	// CommandGOMAXPROCS, with SetGOMAXPROCS, is the command's GOMAXPROCS
	// ("" for none): cordon starts a reaper with GOMAXPROCS=1, so that
	// its runtime starts no thread for a second P, and the reaper gives
	// the command its own back.
	CommandGOMAXPROCS string
	SetGOMAXPROCS     bool
	Argv              []string
}

// Args renders the config as the helper's command line (after Arg).
func (c Config) Args() []string {
	var a []string
	if c.LandlockABI > 0 {
		a = append(a, "--landlock", strconv.Itoa(c.LandlockABI))
	}
	for _, w := range c.Writable {
		a = append(a, "--rw", w)
	}
	if c.NetDeny {
		a = append(a, "--net-deny")
	}
	if c.ProxyPort > 0 {
		a = append(a, "--proxy-port", strconv.Itoa(c.ProxyPort))
	}
	if c.Capture {
		a = append(a, "--capture")
	}
	if c.ProxySocket != "" {
		a = append(a, "--proxy-socket", c.ProxySocket)
	}
	if c.MetadataDeny {
		a = append(a, "--metadata-deny")
	}
	if c.IPCDeny {
		a = append(a, "--ipc-deny")
	}
	for _, d := range c.DenyRead {
		a = append(a, "--deny-read", d)
	}
	if c.StatusFD > 0 {
		a = append(a, "--status-fd", strconv.Itoa(c.StatusFD))
	}
	if c.ReapFD > 0 {
		a = append(a, "--reap-fd", strconv.Itoa(c.ReapFD))
	}
	if c.WardenFD > 0 {
		a = append(a, "--warden-fd", strconv.Itoa(c.WardenFD))
	}
	if c.Zygote {
		a = append(a, "--zygote")
	}
	if c.Unconfined {
		a = append(a, "--unconfined")
	}
	if c.PassFDs {
		a = append(a, "--pass-fds")
	}
	if c.SetGOMAXPROCS {
		a = append(a, CommandGOMAXPROCSArg, c.CommandGOMAXPROCS)
	}
	a = append(a, "--")
	return append(a, c.Argv...)
}

// CommandGOMAXPROCSArg carries Config.CommandGOMAXPROCS; cordon inserts it
// as a reaper's first argument when it starts one.
const CommandGOMAXPROCSArg = "--command-gomaxprocs"

// Parse is deliberately hand-written: no flag package, no
// allocation-heavy parsing on the path of every confined command.
func Parse(args []string) (Config, error) {
	var c Config
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
			c.Argv = args[i+1:]
			if c.PassFDs && (!c.Unconfined || c.StatusFD > 0) {
				return c, fmt.Errorf("--pass-fds takes --unconfined and no --status-fd")
			}
			if c.Unconfined && (c.ReapFD == 0 || c.LandlockABI > 0 || c.Zygote) {
				// Fail closed: the flag only ever drops the confinement a
				// reaper would otherwise start.
				return c, fmt.Errorf("--unconfined takes --reap-fd and no confinement")
			}
			if c.SetGOMAXPROCS && c.ReapFD == 0 {
				return c, fmt.Errorf("%s takes --reap-fd", CommandGOMAXPROCSArg)
			}
			if c.Zygote {
				if len(c.Argv) > 0 || c.StatusFD == 0 {
					return c, fmt.Errorf("--zygote takes a control socket (--status-fd) and no command")
				}
				return c, nil
			}
			if len(c.Argv) == 0 {
				return c, fmt.Errorf("no command after --")
			}
			return c, nil
		case "--landlock", "--status-fd", "--reap-fd", "--warden-fd", "--proxy-port":
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
				c.LandlockABI = n
			case "--status-fd":
				c.StatusFD = n
			case "--proxy-port":
				if n > 65535 {
					return c, fmt.Errorf("%s: bad value %q", flag, v)
				}
				c.ProxyPort = n
			case "--warden-fd":
				c.WardenFD = n
			default:
				c.ReapFD = n
			}
		case CommandGOMAXPROCSArg:
			v, err := next()
			if err != nil {
				return c, err
			}
			c.CommandGOMAXPROCS, c.SetGOMAXPROCS = v, true
		case "--proxy-socket":
			v, err := next()
			if err != nil {
				return c, err
			}
			c.ProxySocket = v
		case "--rw", "--deny-read":
			flag := args[i]
			v, err := next()
			if err != nil {
				return c, err
			}
			if flag == "--rw" {
				c.Writable = append(c.Writable, v)
			} else {
				c.DenyRead = append(c.DenyRead, v)
			}
		case "--capture":
			c.Capture = true
		case "--net-deny":
			c.NetDeny = true
		case "--metadata-deny":
			c.MetadataDeny = true
		case "--ipc-deny":
			c.IPCDeny = true
		case "--zygote":
			c.Zygote = true
		case "--unconfined":
			c.Unconfined = true
		case "--pass-fds":
			c.PassFDs = true
		default:
			return c, fmt.Errorf("unknown helper argument %q", args[i])
		}
	}
	return c, fmt.Errorf("missing -- before the command")
}
