package helper

import (
	"fmt"
	"slices"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

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

var seccompOps = map[string]seccomp.Operation{"eq": seccomp.Equal, "ne": seccomp.NotEqual, "gt": seccomp.GreaterThan, "bits": seccomp.BitsSet}

// seccompPolicy assembles the rules of seccomp_rules.go: each refused call
// fails with EPERM, everything else is allowed.
func seccompPolicy(native *arch.Info, o SeccompOptions) seccomp.Policy {
	var plain []string
	var conditional []seccomp.NameWithConditions
	for _, r := range rulesFor(o) {
		names := existingSyscalls(native, r.Names)
		if len(r.Conds) == 0 {
			plain = append(plain, names...)
			continue
		}
		for _, name := range names {
			for _, c := range r.Conds {
				var all seccomp.ArgumentConditions
				for _, a := range append(slices.Clone(r.And), c) {
					all = append(all, seccomp.Condition{Argument: a.Arg, Operation: seccompOps[a.Op], Value: a.Value})
				}
				conditional = append(conditional, seccomp.NameWithConditions{Name: name, Conditions: all})
			}
		}
	}
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: []seccomp.SyscallGroup{
		{Action: seccomp.ActionErrno, Names: plain},
		{Action: seccomp.ActionErrno, NamesWithCondtions: conditional},
	}}
}

// installSeccomp loads the filter on the calling thread (the helper execs
// from that same locked thread). A foreign-architecture syscall (i386 via
// int 0x80 on x86_64) would skip the library's per-arch program and fall
// through to its default "allow", so the filter first kills any process
// that tries one.
func installSeccomp(o SeccompOptions) error {
	native, err := arch.GetInfo("")
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	policy := seccompPolicy(native, o)
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
