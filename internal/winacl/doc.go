// Package winacl is cordon's windows-acl backend without its glue to the
// sandbox package, which it does not import: sandbox turns its policy into
// a Policy and a Confinement into its own ConfinedArgv, and the lean
// cordon-helper runs Run without linking sandbox.
//
// The mechanism, in one paragraph: the command runs under a
// WRITE_RESTRICTED token. Such a token passes a write access check only if
// the object's DACL also grants the access to one of the token's
// restricting SIDs. cordon gives every writable root a SID of its own
// (sid.go), grants that SID write on the root (inherited by everything
// below), and puts into each command's token only the SIDs of the roots
// its policy may write. Reads are checked as usual, which is why a
// write-restricted token cannot enforce the read-deny list (limits.go).
//
// What builds and is tested on every OS: the ACL entries a policy needs
// (plan.go), the token's recipe and the fallback decision (token.go), the
// runner's command line and exit codes (runner.go), the command's
// environment and description (confine.go), the probe's commands
// (probe.go). What runs on Windows only: Detect and the token
// (token_windows.go), Confinement.Apply (acl_windows.go) and Run, the
// runner (run_windows.go).
//
// The flow: at start-up Detect decides once between the restricted token
// and the fallback; for each command Confine plans it, Apply writes the
// ACL entries, and cordon starts the runner with Confinement.Args, which
// Run reads back in its own process.
package winacl
