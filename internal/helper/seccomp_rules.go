package helper

import (
	"fmt"
	"strings"
)

// The seccomp filter of every confined command, as data: the Linux helper
// assembles it (seccomp_linux.go) and `cordon status` lists it, so what is
// reported is what is installed.

// SeccompOptions select the rules that depend on the policy or backend.
type SeccompOptions struct {
	NetDeny bool // network deny: no new sockets but netlink ones
	// NetRestricted: network through the egress proxy only — of socket
	// families only IPv4 and netlink, and of IPv4 only TCP (what
	// reaches the proxy).
	NetRestricted bool
	MetadataDeny  bool // read-only Landlock: no mode, owner, time or xattr changes
	IPCDeny       bool // no IPC namespace (Landlock): no SysV IPC, no POSIX queues
}

// argCond refuses a call when argument Arg compares to Value by Op ("eq",
// "ne", "gt"). The conditions of one rule are alternatives: any one that
// holds refuses the call; a rule without conditions refuses it always.
type argCond struct {
	Arg   uint32
	Op    string
	Value uint64
}

type seccompRule struct {
	Names []string
	Conds []argCond
	// And holds with every one of Conds: the rule refuses a call when
	// all of And and any one of Conds hold.
	And  []argCond
	Why  string
	when func(SeccompOptions) bool
}

// Linux's values, whatever the platform this is built on (the filter only
// ever runs on Linux).
const (
	linuxTIOCSTI   = 0x5412
	linuxTIOCLINUX = 0x541C
	linuxAFInet    = 2
	linuxAFNetlink = 16
	linuxAFVsock   = 40
	// notStream matches a socket type whose low bits are not SOCK_STREAM
	// (1): datagram, raw, seqpacket, packet. The flags above them
	// (SOCK_NONBLOCK, SOCK_CLOEXEC) do not overlap it.
	notStream    = 0xE
	linuxTCPProt = 6
	// beyond32Bits matches an argument whose high 32 bits are set. The
	// kernel reads ioctl requests and socket families as 32-bit ints, so a
	// filter that compared all 64 bits for equality could be bypassed by
	// setting high bits (CVE-2019-10063). Refusing any such value closes that.
	beyond32Bits = 0xFFFFFFFF
)

// metadataSyscalls change a file's mode, owner, timestamps or extended
// attributes. Landlock does not govern them, so when Landlock is the only
// file-system boundary of a read-only command the filter refuses them.
var metadataSyscalls = []string{
	"chmod", "fchmod", "fchmodat", "fchmodat2",
	"chown", "fchown", "lchown", "fchownat",
	"utime", "utimes", "futimesat", "utimensat",
	"setxattr", "lsetxattr", "fsetxattr", "setxattrat",
	"removexattr", "lremovexattr", "fremovexattr", "removexattrat",
}

func always(SeccompOptions) bool { return true }

func ne0(arg uint32) argCond { return argCond{Arg: arg, Op: "ne", Value: 0} }

var seccompRules = []seccompRule{
	{Names: []string{"ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp", "pidfd_getfd"},
		Why: "no access to other processes' memory, descriptors or execution", when: always},
	{Names: []string{"io_uring_setup", "io_uring_enter", "io_uring_register"},
		Why: "io_uring opens files and sockets without the system calls filtered here", when: always},
	{Names: []string{"keyctl", "add_key", "request_key"},
		Why: "the kernel keyrings are the session's and user's, not the sandbox's: no reading, changing or adding keys", when: always},
	{Names: []string{"prlimit64"}, Conds: []argCond{ne0(0)},
		Why: "resource limits only of the calling process (pid 0), never of another one", when: always},
	{Names: []string{"setpriority"}, Conds: []argCond{ne0(0), ne0(1)}, // which = PRIO_PROCESS, who = 0
		Why: "priority only of the calling process, never of another process, group or user", when: always},
	{Names: []string{"ioprio_set"}, Conds: []argCond{{Arg: 0, Op: "ne", Value: 1}, ne0(1)}, // which = IOPRIO_WHO_PROCESS, who = 0
		Why: "I/O priority only of the calling process", when: always},
	{Names: []string{"sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr", "migrate_pages", "move_pages"}, Conds: []argCond{ne0(0)},
		Why: "scheduling and memory placement only of the calling process", when: always},
	// A queued signal's sender chooses its si_code: Go's runtime takes a
	// queued SIGSEGV or SIGBUS for a fault of its own, and dies of it. The
	// sandbox's init is a warm sandbox's zygote, which must outlive every
	// command (plain kill and tgkill it ignores).
	{Names: []string{"rt_sigqueueinfo", "rt_tgsigqueueinfo"}, Conds: []argCond{{0, "eq", 1}, {0, "gt", beyond32Bits}},
		Why: "no queued signal to the sandbox's init, whose sender could pass it off as a fault", when: always},
	{Names: []string{"pidfd_send_signal"}, Conds: []argCond{ne0(2)},
		Why: "no signal through a pidfd with a siginfo of the sender's making", when: always},
	{Names: []string{"ioctl"}, Conds: []argCond{{1, "eq", linuxTIOCSTI}, {1, "eq", linuxTIOCLINUX}, {1, "gt", beyond32Bits}},
		Why: "no keystrokes pushed into a terminal (TIOCSTI, TIOCLINUX)", when: always},
	{Names: []string{"socket"}, Conds: []argCond{{0, "eq", linuxAFVsock}, {0, "gt", beyond32Bits}},
		Why: "no vsock sockets to the hypervisor", when: always},
	// Under network deny and restricted the socket families are an allow
	// list, not a deny list: a family nobody thought of (SMC, which falls
	// back to TCP outside Landlock's TCP rules; RXRPC, kernel UDP; TIPC;
	// RDS; whatever a future kernel adds) is refused by default. Allowed:
	// netlink, which is no network — glibc's getaddrinfo asks it
	// (NETLINK_ROUTE) which address families the machine has, and `ip`
	// and Go's net.Interfaces list interfaces through it (under bwrap
	// only the namespace's lo); and under restricted IPv4, whose TCP
	// reaches the proxy on 127.0.0.1 (the rule below keeps it to TCP).
	// Unix sockets stay refused (socketpair, which makes a connected pair
	// and reaches nothing, stays allowed). A family with high bits set is
	// "not equal" to every allowed one, so it is refused too.
	{Names: []string{"socket"}, Conds: []argCond{{0, "ne", linuxAFNetlink}},
		Why: "network deny: of socket families only netlink (interface queries; socketpair stays allowed): no unix, inet, inet6 or any other family", when: func(o SeccompOptions) bool { return o.NetDeny }},
	{Names: []string{"socket"}, And: []argCond{{0, "ne", linuxAFInet}}, Conds: []argCond{{0, "ne", linuxAFNetlink}},
		Why: "network restricted: of socket families only IPv4 (the proxy is on 127.0.0.1) and netlink (socketpair stays allowed): no unix, IPv6, SMC, RXRPC, TIPC or any other family", when: func(o SeccompOptions) bool { return o.NetRestricted }},
	{Names: []string{"socket"}, And: []argCond{{0, "eq", linuxAFInet}}, Conds: []argCond{{1, "bits", notStream}, {2, "gt", linuxTCPProt}},
		Why: "network restricted: of inet sockets only TCP (no UDP, raw, SCTP or MPTCP, which Landlock's TCP rules do not govern)", when: func(o SeccompOptions) bool { return o.NetRestricted }},
	{Names: metadataSyscalls,
		Why: "read-only under Landlock: no mode, owner, timestamp or xattr changes anywhere", when: func(o SeccompOptions) bool { return o.MetadataDeny }},
	{Names: []string{"shmget", "shmat", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop", "semctl",
		"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr"},
		Why: "no IPC namespace of its own: no SysV shared memory, queues or semaphores, no POSIX message queues of the host", when: func(o SeccompOptions) bool { return o.IPCDeny }},
}

// rulesFor returns the rules that apply under o.
func rulesFor(o SeccompOptions) []seccompRule {
	var out []seccompRule
	for _, r := range seccompRules {
		if r.when(o) {
			out = append(out, r)
		}
	}
	return out
}

// DescribeSeccomp lists, one line a rule, the filter a command runs
// under with o.
func DescribeSeccomp(o SeccompOptions) []string {
	var lines []string
	for _, r := range rulesFor(o) {
		names := strings.Join(r.Names, ", ")
		if len(r.Names) > 8 {
			names = strings.Join(r.Names[:6], ", ") + fmt.Sprintf(" and %d more", len(r.Names)-6)
		}
		lines = append(lines, fmt.Sprintf("%s refused%s: %s", names, condText(r.Conds, r.And), r.Why))
	}
	return lines
}

func condText(conds, and []argCond) string {
	if len(conds) == 0 {
		return ""
	}
	ops := map[string]string{"eq": "=", "ne": "≠", "gt": ">", "bits": "has bits of"}
	text := func(cs []argCond, sep string) string {
		var parts []string
		for _, c := range cs {
			parts = append(parts, fmt.Sprintf("arg%d %s %#x", c.Arg, ops[c.Op], c.Value))
		}
		return strings.Join(parts, sep)
	}
	if len(and) > 0 {
		return " when " + text(and, " and ") + " and (" + text(conds, " or ") + ")"
	}
	return " when " + text(conds, " or ")
}
