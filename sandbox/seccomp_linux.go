package sandbox

import (
	"fmt"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// beyond32Bits matches a syscall argument whose high 32 bits are set. The
// kernel reads ioctl requests and socket families as 32-bit ints, so a
// filter that compared all 64 bits for equality could be bypassed by
// setting high bits (CVE-2019-10063). Refusing any such value closes that.
const beyond32Bits = 0xFFFFFFFF

// seccompPolicy is the filter every confined command runs under: no
// ptrace or cross-process memory access, no io_uring (it can open sockets
// and files without the syscalls filtered here), no vsock, no terminal
// injection, and with network deny no new unix or inet sockets
// (socketpair stays allowed).
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

// existingSyscalls keeps the names this architecture has (arm64 has no
// chmod, only fchmodat), since the assembler refuses unknown names.
func existingSyscalls(native *arch.Info, names []string) []string {
	var out []string
	for _, n := range names {
		if _, ok := native.SyscallNames[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

func seccompPolicy(native *arch.Info, netDeny, metadataDeny bool) seccomp.Policy {
	deny := func(name string, conds ...seccomp.ArgumentConditions) []seccomp.NameWithConditions {
		out := make([]seccomp.NameWithConditions, len(conds))
		for i, c := range conds {
			out[i] = seccomp.NameWithConditions{Name: name, Conditions: c}
		}
		return out
	}
	arg := func(n uint32, op seccomp.Operation, v uint64) seccomp.ArgumentConditions {
		return seccomp.ArgumentConditions{{Argument: n, Operation: op, Value: v}}
	}
	ioctl := deny("ioctl",
		arg(1, seccomp.Equal, unix.TIOCSTI),
		arg(1, seccomp.Equal, unix.TIOCLINUX),
		arg(1, seccomp.GreaterThan, beyond32Bits),
	)
	socketFamilies := []seccomp.ArgumentConditions{
		arg(0, seccomp.Equal, unix.AF_VSOCK),
		arg(0, seccomp.GreaterThan, beyond32Bits),
	}
	if netDeny {
		socketFamilies = append(socketFamilies,
			arg(0, seccomp.Equal, unix.AF_UNIX),
			arg(0, seccomp.Equal, unix.AF_INET),
			arg(0, seccomp.Equal, unix.AF_INET6),
		)
	}
	groups := []seccomp.SyscallGroup{
		{
			Action: seccomp.ActionErrno,
			Names: []string{
				"ptrace", "process_vm_readv", "process_vm_writev",
				"io_uring_setup", "io_uring_enter", "io_uring_register",
			},
		},
		{
			Action:             seccomp.ActionErrno,
			NamesWithCondtions: append(ioctl, deny("socket", socketFamilies...)...),
		},
	}
	if metadataDeny {
		groups = append(groups, seccomp.SyscallGroup{Action: seccomp.ActionErrno, Names: existingSyscalls(native, metadataSyscalls)})
	}
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups}
}

// installSeccomp loads the filter on the calling thread (the helper execs
// from that same locked thread). A foreign-architecture syscall (i386 via
// int 0x80 on x86_64) would skip the library's per-arch program and fall
// through to its default "allow", so the filter first kills any process
// that tries one.
func installSeccomp(netDeny, metadataDeny bool) error {
	native, err := arch.GetInfo("")
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	policy := seccompPolicy(native, netDeny, metadataDeny)
	insts, err := policy.Assemble()
	if err != nil {
		return fmt.Errorf("assembling seccomp filter: %w", err)
	}
	const archOffset = 4 // offsetof(struct seccomp_data, arch)
	guard := []bpf.Instruction{
		bpf.LoadAbsolute{Off: archOffset, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(native.ID), SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
	}
	raw, err := bpf.Assemble(append(guard, insts...))
	if err != nil {
		return fmt.Errorf("assembling seccomp filter: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("loading seccomp filter: %w", errno)
	}
	return nil
}
