// Package gitrepo finds the git repositories beneath the writable roots
// and what in each makes git run code when the human runs git there later,
// outside any sandbox: hooks, the configuration as git itself reads it
// (every scope, includes followed), submodules, gitlinks and linked
// worktrees. It only looks; the sandbox protects what it names, and the
// guard's audit disarms what a command made.
package gitrepo
