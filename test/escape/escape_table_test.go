//go:build linux

package escape_test

// escapeCase is one escape attempt. Unless Expect says otherwise it must
// be blocked: no change to the guarded trees (everything outside the
// writable workspace, and the protected paths inside it), no secret in the
// output, and nothing the case's own Check finds (a listener reached, a
// terminal injected, a process killed or left behind, code that a human's
// later `git commit` would run).
type escapeCase struct {
	Name string
	// Doc says in one line why this is an escape attempt, with a
	// reference (CVE, issue) where there is one.
	Doc string
	// Modes limits the case to some confined modes (default: both).
	Modes []string
	// Home makes the workspace the fake HOME instead of a project dir.
	Home bool
	// NetDeny runs with --network deny.
	NetDeny bool
	// BashOnly cases attack the MCP tool interface itself.
	BashOnly bool
	// Fresh gives the case a server of its own (it may damage the
	// session, e.g. change its mode).
	Fresh bool
	// NoMarker: the command is not expected to run at all.
	NoMarker bool
	// Needs names programs the case needs; it is skipped, with the
	// reason logged, when one is missing.
	Needs []string
	// NoControl says why the case has no positive control (the same
	// attack run unconfined, which must show the escape).
	NoControl string
	// Unprovable, when set, says why this machine refuses the attack even
	// to the unconfined control (a device cgroup, a missing capability),
	// or "": the control is then skipped, with the reason logged.
	Unprovable func() string

	Setup  func(r *run)
	Script func(r *run) string
	Check  func(r *run) []string
	Guard  func(r *run) []string
	// Expect is the outcome per backend ("landlock") or backend and mode
	// ("landlock/workspace-write") where it is not "blocked": documented
	// gaps, asserted to still reproduce.
	Expect map[string]outcome
	// Fence are the equivalent file-tool calls, run through MCP after the
	// bash attack: the FS fence must refuse them.
	Fence    []fenceCall
	BashArgs map[string]any
	// Race also races write_file against the attack (bash channel).
	Race bool
	// Serial cases touch machine-wide state (/etc, /proc/sys): they run
	// one at a time across all groups, and restore what they changed.
	Serial bool
	// TimeoutKill: through the bash tool the call is meant to be killed by
	// its timeout_ms (BashArgs), so it must report timed_out instead of
	// reaching its end.
	TimeoutKill bool
}

// outcome is what the table expects of one backend (and mode).
type outcome struct {
	gap    bool // a documented limitation: the effect is expected
	intact bool // … but the file system must stay unchanged
	// refused: the backend cannot confine this policy, so cordon must
	// refuse it: the command never runs (`cordon exec` exits 125 with
	// "cordon: sandbox unavailable:", the bash tool answers isError with
	// SANDBOX_UNAVAILABLE) and nothing changes.
	refused bool
	why     string
}

func gap(why string) outcome       { return outcome{gap: true, why: why} }
func gapIntact(why string) outcome { return outcome{gap: true, intact: true, why: why} }
func refused(why string) outcome   { return outcome{refused: true, why: why} }

func (c *escapeCase) expect(backend, mode string) outcome {
	if c.Home && mode == "workspace-write" {
		return refused(homeRule)
	}
	if o, ok := c.Expect[backend+"/"+mode]; ok {
		return o
	}
	if o, ok := c.Expect[backend]; ok {
		return o
	}
	return outcome{}
}

type fenceCall struct {
	Tool        string
	Args        func(r *run) map[string]any
	MaySucceed  bool // the call may succeed, but must change nothing guarded
	IgnoreNlink bool // … except link counts (replacing a hard link breaks it)
}

func writeFile(path func(r *run) string) fenceCall {
	return fenceCall{Tool: "write_file", Args: func(r *run) map[string]any {
		return map[string]any{"path": path(r), "content": r.pwn() + "\n"}
	}}
}

func readFile(path func(r *run) string) fenceCall {
	return fenceCall{Tool: "read_file", Args: func(r *run) map[string]any { return map[string]any{"path": path(r)} }}
}

func rel(p string) func(r *run) string { return func(*run) string { return p } }

// The documented limitations (README.md, "Limitations"; `cordon status`
// lists them for Landlock).
var (
	llMetadata = "Landlock: file metadata outside the writable roots is not governed in workspace-write"
	llUnixSock = "Landlock: unix sockets on the file system stay reachable with network allow"
	llCmdline  = "Landlock: no pid namespace, so other processes' command lines in /proc stay readable"
	llRename   = "Landlock: .git can be renamed and replaced while the command runs; the guard puts the recorded hooks and config into the new one before the call returns"
	byPath     = "both backends confine by path: a hard link made before the session is reachable through the workspace"
	netAllow   = "network allow: only $XDG_RUNTIME_DIR (bwrap) and the Docker sockets are hidden; other unix sockets stay reachable"
	// homeRule is why every workspace = HOME case is refused in
	// workspace-write, on every backend: no writable root may hold the
	// home (SPEC §1, "A writable root never contains the home directory").
	homeRule = "a writable root that holds the home directory is refused on every backend"
)

func onLandlock(o outcome) map[string]outcome { return map[string]outcome{"landlock": o} }

func onLandlockWW(o outcome) map[string]outcome {
	return map[string]outcome{"landlock/workspace-write": o}
}
