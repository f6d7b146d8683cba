package tools

import "os/exec"

// newProcessGroup: on Windows the windows-acl runner puts the command in a
// job object that dies with it, so there is nothing to set here.
func newProcessGroup(*exec.Cmd) {}

// killGroup kills the runner; its kill-on-close job takes the whole tree.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
