//go:build !linux

package sandbox

import "syscall"

func setDeathSignal(*syscall.SysProcAttr, bool) {}
