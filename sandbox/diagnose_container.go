package sandbox

import (
	"bytes"
	"os"
	"strings"
)

// containerHints is what says that cordon runs inside a container, where
// the runtime, not AppArmor or a sysctl, decides whether bwrap may make
// namespaces.
type containerHints struct {
	// Evidence names what gave the container away ("/.dockerenv", …);
	// empty when nothing did.
	Evidence []string
	// SeccompFiltered: a seccomp filter is on this process (Seccomp: 2 in
	// /proc/self/status), as every container runtime's default profile
	// puts one, refusing unshare and clone of new namespaces without
	// CAP_SYS_ADMIN.
	SeccompFiltered bool
}

func (h containerHints) inContainer() bool { return len(h.Evidence) > 0 }

// hostFiles reads the files the detection looks at; tests give their own.
type hostFiles struct {
	exists   func(path string) bool
	readFile func(path string) ([]byte, error)
	getenv   func(key string) string
}

var realHostFiles = hostFiles{
	exists:   func(p string) bool { _, err := os.Lstat(p); return err == nil },
	readFile: os.ReadFile,
	getenv:   os.Getenv,
}

// detectContainerHints is a variable so that tests can pin what the
// diagnosis sees: the machine running them may itself be a container.
var detectContainerHints = func() containerHints { return readContainerHints(realHostFiles) }

// cgroupRuntimeMarks are path parts container runtimes put in the cgroup
// of what they start (cgroup v1, or v2 without a cgroup namespace).
var cgroupRuntimeMarks = []string{"docker", "kubepods", "containerd", "libpod", "crio", "lxc", "garden"}

func readContainerHints(f hostFiles) containerHints {
	var h containerHints
	for _, marker := range []string{"/.dockerenv", "/run/.containerenv"} {
		if f.exists(marker) {
			h.Evidence = append(h.Evidence, marker)
		}
	}
	// systemd-nspawn, podman and LXC set $container for what they start.
	if v := f.getenv("container"); v != "" {
		h.Evidence = append(h.Evidence, "$container="+v)
	}
	if data, err := f.readFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if path := line[strings.LastIndexByte(line, ':')+1:]; containsAny(path, cgroupRuntimeMarks) {
				h.Evidence = append(h.Evidence, "cgroup "+path)
				break
			}
		}
	}
	if data, err := f.readFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && k == "Seccomp" {
				h.SeccompFiltered = strings.TrimSpace(v) == "2"
			}
		}
	}
	return h
}

func containsAny(s string, parts []string) bool {
	for _, p := range parts {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// bwrapNamespaceFailure reports whether bwrap's stderr says it could not
// make its namespaces or mount its /proc: what a host's AppArmor or
// sysctls cause, and equally a container's seccomp profile and masked
// /proc.
func bwrapNamespaceFailure(lower string) bool {
	return containsAny(lower, []string{"setting up uid map", "rtm_newaddr", "no permissions to creat",
		"creating new namespace failed", "can't mount proc"}) ||
		strings.Contains(lower, "bwrap:") && strings.Contains(lower, "operation not permitted")
}

// explainContainerBwrapFailure is the diagnosis when bwrap fails in a
// container (or under a seccomp filter that refuses namespaces): the
// runtime's confinement is the cause, and Landlock needs none of what it
// refuses.
func explainContainerBwrapFailure(raw string, h containerHints) string {
	var b bytes.Buffer
	b.WriteString("bwrap cannot create its namespaces: " + raw + ". ")
	where := "this process runs under a seccomp filter (Seccomp: 2 in /proc/self/status)"
	if h.inContainer() {
		where = "cordon runs in a container (" + strings.Join(h.Evidence, ", ") + ")"
		if h.SeccompFiltered {
			where += " under a seccomp filter"
		}
	}
	b.WriteString("The cause is not AppArmor or a sysctl: " + where + ". ")
	b.WriteString("A container runtime's default seccomp profile refuses unshare and clone of new namespaces " +
		"to a process without CAP_SYS_ADMIN, and its masked /proc cannot be mounted again inside them. ")
	b.WriteString("Nothing needs changing: cordon selects Landlock by itself where the kernel has it (Linux ≥ 5.13; " +
		"leave --backend unset, or give --backend landlock). To use bwrap anyway, run the container with " +
		"--security-opt seccomp=unconfined (or a profile allowing unshare, clone, mount and pivot_root) and " +
		"--security-opt systempaths=unconfined, or --privileged; in Kubernetes, seccompProfile Unconfined and procMount Unmasked")
	return b.String()
}
