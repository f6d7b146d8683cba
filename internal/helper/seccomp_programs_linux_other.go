//go:build linux && !(amd64 || arm64 || arm)

package helper

import "golang.org/x/sys/unix"

// seccompPrograms is empty on an architecture without generated programs:
// the helper then refuses to run anything (fail closed).
var seccompPrograms [seccompVariants][]unix.SockFilter
