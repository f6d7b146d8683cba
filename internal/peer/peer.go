// Package peer tells whether the process on the other end of a TCP
// connection to cordon runs inside a cordon sandbox, so that cordon's HTTP
// endpoint can refuse it.
//
// A confined command that can reach the endpoint (network allow shares the
// host's network namespace) and read a bearer token could otherwise open its
// own MCP session, ask for danger-full-access and answer its own
// elicitation. The bearer token guards the endpoint against other people;
// this package guards it against the sandboxes cordon itself runs.
//
// On Linux a Checker finds the client's socket through the kernel's socket
// tables (sock_diag, or /proc/net/tcp and tcp6 where sock_diag is missing),
// the sandboxes through /proc, and then the process that holds the socket.
// A sandbox is every process beneath one whose argv contains the helper's
// marker (that one included), and every confined process (no_new_privs
// set, as cordon's helper sets it) beneath one running cordon's own
// executable. It allows a connection only when no sandbox is running, when
// the client is not on this host, or when it found the socket in a process
// outside every sandbox, whose ancestry, read live, touches none, and in
// none inside. Everything it cannot establish counts against the client: a
// sandboxed process whose descriptors cannot be read (it made itself
// non-dumpable), a socket that no process holds (closed, or in flight
// between processes). A thread with a descriptor table of its own is read
// too. The one exception: cordon's own helpers, registered by pid and start
// time before any command runs beside them (RegisterHelpers), are passed
// over when they cannot be read (helpers_linux.go says why that is safe).
// Another cordon's helpers are not registered here: while another cordon of
// the same user, not root, runs a warm sandbox, this one refuses loopback
// clients.
//
// Limits, stated as os.Root states its own: a process that has left the
// process tree of its sandbox (an orphan reparented to init because nothing
// inside the sandbox reaps it) is no longer recognised; bubblewrap's pid
// namespace makes that impossible, and under Landlock it is the helper's
// job, as a child subreaper, to keep its orphans and to outlive them. A
// relay outside every sandbox (a local proxy, an SSH port forward)
// connects on a confined process's behalf and is what is seen. Processes
// that /proc
// hides (hidepid, another user's processes when cordon is not root) are
// not seen. A socket in transit through an outside process that accepts
// descriptors from anyone (a D-Bus broker) could be taken for that
// process's own for the instant it is there.
//
// Nothing is cached between checks but the pids of the last outside
// holders, which only decide where the search starts: every verdict is made
// from what /proc shows at the time, so a reused pid gains nothing.
//
// On other systems every connection is allowed: macOS's Seatbelt profile
// denies the port to confined commands instead.
package peer

import (
	"net/netip"
)

// Options configure a Checker.
type Options struct {
	// HelperArg marks a sandbox: a process whose argv contains exactly
	// this element is inside a sandbox, and so is every descendant.
	HelperArg string
	// SelfExe, if set, names cordon's own executable: a confined
	// process (no_new_privs set) beneath any process running it is inside
	// too. It covers a helper that has already exec'd its command, and
	// leaves out what cordon runs unconfined (danger-full-access). Only
	// processes whose argv[0] ends in the executable's file name are
	// looked at (a cordon started through a link of another name is
	// recognised by its helper's marker alone).
	SelfExe string
}

// Verdict is the outcome of one Check.
type Verdict struct {
	Refused bool
	// Reason is one sentence for the log.
	Reason string
	// PID and Command name the process found holding the client's
	// socket (0 and "" when none was, or none was looked for).
	PID     int
	Command string
}

func allow(reason string) Verdict { return Verdict{Reason: reason} }

func refuse(reason string) Verdict { return Verdict{Refused: true, Reason: reason} }

// Check decides about the TCP connection that server accepted from client
// (conn.LocalAddr and conn.RemoteAddr).
func (c *Checker) Check(server, client netip.AddrPort) Verdict {
	return c.check(server, client)
}
