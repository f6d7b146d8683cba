package main

import "golang.org/x/sys/unix"

// hideSecrets makes cordon non-dumpable: its /proc/PID/environ and
// /proc/PID/mem, which hold the secrets' values (a from_env value is in
// the environment cordon started with), become root's, so that a command
// of the same user — under Landlock there is no pid namespace to hide
// cordon — cannot read them.
func hideSecrets() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
