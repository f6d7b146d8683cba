package helper

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The filter is assembled ahead of time, one program per variant of
// SeccompOptions and per architecture (seccomp_programs_linux_*.go,
// generated from seccomp_rules.go by `go test ./internal/helper -run
// TestSeccompProgramsAreCurrent -update`, which fails when they drift):
// assembling it here, in every confined command's start-up, cost more than
// loading it.

// seccompVariants is the number of distinct SeccompOptions: network
// allow, deny or restricted, times MetadataDeny, times IPCDeny.
const seccompVariants = 12

// seccompVariant numbers o as the generated tables do.
func seccompVariant(o SeccompOptions) int {
	net := 0
	switch {
	case o.NetDeny:
		net = 1
	case o.NetRestricted:
		net = 2
	}
	v := net * 4
	if o.MetadataDeny {
		v += 2
	}
	if o.IPCDeny {
		v++
	}
	return v
}

// seccompVariantOptions is seccompVariant's inverse.
func seccompVariantOptions(v int) SeccompOptions {
	return SeccompOptions{NetDeny: v/4 == 1, NetRestricted: v/4 == 2, MetadataDeny: v&2 != 0, IPCDeny: v&1 != 0}
}

// installSeccomp loads the filter on the calling thread (the helper execs
// from that same locked thread). An architecture without a generated
// program fails closed.
func installSeccomp(o SeccompOptions) error {
	if o.NetDeny && o.NetRestricted {
		return fmt.Errorf("seccomp: network cannot be both deny and restricted")
	}
	filter := seccompPrograms[seccompVariant(o)]
	if len(filter) == 0 {
		return fmt.Errorf("seccomp: no filter was generated for %s; cordon cannot confine commands on this architecture", runtime.GOARCH)
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return fmt.Errorf("loading seccomp filter: %w", errno)
	}
	return nil
}
