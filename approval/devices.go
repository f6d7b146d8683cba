package approval

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// devicePrefixes are the names under /dev of disks, partitions and raw
// memory on Linux and macOS. Writing to one bypasses every file system
// permission the sandbox relies on, so it is always dangerous. /dev/null,
// /dev/tty, /dev/stdout and friends are not among them.
var devicePrefixes = []string{
	"sd", "hd", "vd", "xvd", "nvme", "mmcblk", "loop", "dm-", "md", "nbd",
	"zd", "sr", "mapper/", "root",
	"disk", "rdisk", // macOS, and Linux's /dev/disk/by-*
	"mem", "kmem", "port",
}

// blockDevice reports whether p names a disk or memory device, and its
// cleaned name.
func blockDevice(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") {
		return "", false
	}
	p = path.Clean(p)
	rest, ok := strings.CutPrefix(p, "/dev/")
	if !ok {
		return "", false
	}
	for _, prefix := range devicePrefixes {
		if strings.HasPrefix(rest, prefix) {
			return p, true
		}
	}
	return "", false
}

// writes reports whether a redirection opens its target for writing.
func writes(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.DplOut:
		return true
	}
	return false
}

// deviceTarget reports the device a writing redirection targets, if any.
func deviceTarget(r *syntax.Redirect) (string, bool) {
	if r.Word == nil {
		return "", false
	}
	f := resolve(r.Word)
	if !f.static() {
		return "", false
	}
	return blockDevice(f.text())
}

// deviceOperands flags arguments of a copying command (tee, cp, dd of=)
// that name a device. With prefix set, only arguments that start with it
// count, and the prefix is cut off first.
func (c *classifier) deviceOperands(text string, args []field, prefix string) {
	for _, a := range args {
		if !a.static() {
			continue
		}
		t, ok := strings.CutPrefix(a.text(), prefix)
		if !ok {
			continue
		}
		if dev, ok := blockDevice(t); ok {
			c.add(text, "writes to device "+dev)
		}
	}
}
