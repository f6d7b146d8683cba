// Package helper is cordon's confinement helper: the program that runs
// between a backend's runner and the command, in a process of its own
// (cordon re-executed, or the lean cordon-helper binary). On Linux it
// marks inherited descriptors close-on-exec, sets no_new_privs, applies
// Landlock when it is the backend (with reads granted around the
// read-deny list), drops every capability, installs the seccomp filter
// and execs the command — or, under Landlock, first stays behind as the
// command's reaper, or, in a warm bwrap sandbox, serves as the zygote that
// forks each command (zygote_linux.go).
//
// Config is its command line, which the sandbox package writes and the
// helper parses; StatusStarted and StatusError are what it reports on the
// status pipe. It is internal: the helper links nothing but this package.
package helper
