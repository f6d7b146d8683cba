//go:build !windows

package sandbox

import "os/exec"

// probeCommands are the probe's two runs: `true`, and a shell that writes
// the marker in the workspace and then appends to the canary outside it.
func probeCommands(marker, canary string) (permissive, write []string) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		truePath = "/bin/true"
	}
	return []string{truePath}, []string{"/bin/sh", "-c", `printf ok > "$1"; printf breach >> "$2"`, "sh", marker, canary}
}
