// Package guard keeps what a command must not leave for the human as it
// was before the command: the protected paths no OS mechanism can keep
// read-only (guard.go), restored once every process of the command is
// gone, with a baseline shared by overlapping calls and by every cordon of
// a state directory (guardstore.go); and the audit of what a command made
// that the human's tools would run later — a new repository's hooks and
// configuration, an unfinished rebase, a protected name made beneath a
// writable root (audit.go, gitstate.go). What it undid, it reports as
// Changes.
package guard
