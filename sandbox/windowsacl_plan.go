package sandbox

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// This file is the windows-acl backend minus the Windows API calls: which
// SIDs a token carries, which ACL entries a policy needs, the runner's
// command line, the fallback decision and what it leaves unenforced. It
// builds and is tested on every OS; windowsacl_windows.go only turns the
// plan into API calls.
//
// The mechanism, in one paragraph: the command runs under a
// WRITE_RESTRICTED token. Such a token passes a write access check only if
// the object's DACL also grants the access to one of the token's
// restricting SIDs. cordon gives every writable root a SID of its own,
// grants that SID write on the root (inherited by everything below), and
// puts into each command's token only the SIDs of the roots its policy may
// write. Reads are checked as usual, which is why a write-restricted token
// cannot enforce the read-deny list.

// windowsACLName is the backend's config name.
const windowsACLName = "windows-acl"

// Access rights, spelled out from winnt.h so that the plan can be tested
// anywhere; windowsacl_windows.go fails to build if one of them differs
// from golang.org/x/sys/windows.
const (
	winFileWriteData       = 0x00000002 // FILE_WRITE_DATA; FILE_ADD_FILE on a directory
	winFileAppendData      = 0x00000004 // FILE_APPEND_DATA; FILE_ADD_SUBDIRECTORY on a directory
	winFileWriteEA         = 0x00000010
	winFileDeleteChild     = 0x00000040
	winFileWriteAttributes = 0x00000100
	winDelete              = 0x00010000
	winWriteDAC            = 0x00040000
	winWriteOwner          = 0x00080000

	winFileGenericRead    = 0x00120089
	winFileGenericWrite   = 0x00120116
	winFileGenericExecute = 0x001200A0

	// winGrantMask is what a writable root's SID may do: everything but
	// changing permissions or ownership, so a confined command can never
	// remove the deny entries that protect paths inside the root.
	winGrantMask = winFileGenericRead | winFileGenericWrite | winFileGenericExecute | winDelete | winFileDeleteChild

	// winDenyWriteMask keeps a protected path read-only: no data, no
	// attributes, no new entries in it, no delete, no permission change.
	winDenyWriteMask = winFileWriteData | winFileAppendData | winFileWriteEA | winFileWriteAttributes |
		winDelete | winFileDeleteChild | winWriteDAC | winWriteOwner
)

// Token and job settings, from winnt.h as well.
const (
	winDisableMaxPrivilege = 0x1 // all privileges but SeChangeNotifyPrivilege go
	winLUAToken            = 0x4 // an elevated token loses its administrator rights
	winWriteRestricted     = 0x8 // restricting SIDs apply to write access only

	winJobKillOnJobClose          = 0x00002000
	winJobDieOnUnhandledException = 0x00000400

	// winJobUILimits is every JOB_OBJECT_UILIMIT_* flag. HANDLES matters
	// most: it stops a confined process from sending window messages to the
	// user's unconfined programs on the same desktop (the Windows cousin of
	// TIOCSTI injection); the clipboard flags keep it from reading secrets
	// from, or planting commands in, the clipboard.
	winJobUILimits = 0xFF
)

// Well-known SIDs the token recipe names.
const (
	winSIDEveryone       = "S-1-1-0"
	winSIDLocalSystem    = "S-1-5-18"
	winSIDAdministrators = "S-1-5-32-544"
	winSIDLocalAdmin     = "S-1-5-114" // local account and member of Administrators
)

// cordon's SIDs live under the resource-manager authority (S-1-9), which
// no account is ever issued from, with a first sub-authority that spells
// "cord" so an administrator can tell cordon's ACL entries at a glance.
const (
	winSIDPrefix       = "S-1-9-1668248164-"
	winSIDGrantPrefix  = winSIDPrefix + "1-" // one per writable root
	winSIDObjectPrefix = winSIDPrefix + "2-" // one per runner, for its own objects
)

// windowsGrantSID is the SID that may write beneath root. It is derived
// from the root's path, so it is the same in every cordon process and
// every session: the inherited grant on a large workspace is propagated
// once per machine instead of once per command, concurrent cordons that
// rewrite the same DACL write the same entries, and nothing accumulates.
// Carrying the SID never widens anything by itself: a restricting SID can
// only take access away. The path is lowercased because NTFS is
// case-insensitive.
func windowsGrantSID(root string) string {
	sum := sha256.Sum256([]byte("cordon windows-acl grant v1\x00" + strings.ToLower(filepath.Clean(root))))
	return winSIDGrantPrefix + sidSubAuthorities(sum[:16])
}

// newWindowsObjectSID returns a fresh SID for the objects one runner's
// command creates (pipes, events, its processes): the token's default DACL
// grants it, so confined processes can use what they make, and nothing
// outside that one command carries it.
func newWindowsObjectSID(random io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("making the object SID: %w", err)
	}
	return winSIDObjectPrefix + sidSubAuthorities(b[:]), nil
}

func sidSubAuthorities(b []byte) string {
	parts := make([]string, 0, len(b)/4)
	for i := 0; i+4 <= len(b); i += 4 {
		parts = append(parts, strconv.FormatUint(uint64(binary.BigEndian.Uint32(b[i:])), 10))
	}
	return strings.Join(parts, "-")
}

// winACE is one access-control entry the backend makes sure exists.
type winACE struct {
	Path string
	SID  string
	Mask uint32
	Deny bool
	// Inherit adds OBJECT_INHERIT_ACE|CONTAINER_INHERIT_ACE: the entry
	// covers everything beneath a directory, present and future. Without
	// it the entry covers the object itself only.
	Inherit bool
}

// windowsACLPlan is what one policy needs on disk and in the token. Every
// entry is standing: grants are the reuse cache described at
// windowsGrantSID, and deny entries must outlive any one command because
// a command of another session may be writing concurrently.
type windowsACLPlan struct {
	// TokenSIDs are the grant SIDs the command's token carries, one per
	// writable root, in WritableRoots order.
	TokenSIDs []string
	// Grants give each writable root's SID write beneath it.
	Grants []winACE
	// Denies keep existing protected paths read-only and pin them: see
	// planProtected.
	Denies []winACE
	// Missing are protected paths that do not exist yet. NTFS cannot deny
	// a name that does not exist, so nothing stops their creation.
	Missing []string
}

// planWindowsACL works out the ACL entries and token SIDs for a policy.
func planWindowsACL(p ExecutionPolicy) (windowsACLPlan, error) {
	var plan windowsACLPlan
	for _, root := range p.WritableRoots {
		sid := windowsGrantSID(root)
		plan.TokenSIDs = append(plan.TokenSIDs, sid)
		plan.Grants = append(plan.Grants, winACE{Path: root, SID: sid, Mask: winGrantMask, Inherit: true})
		// The grant reaches the root itself, DELETE included: without
		// this a command could move the whole workspace into the session
		// tmp (DELETE on the source, add-subdirectory on the target).
		plan.addDeny(winACE{Path: root, SID: sid, Mask: winDelete})
	}
	for _, prot := range p.Protected {
		if err := plan.planProtected(prot, p.WritableRoots); err != nil {
			return windowsACLPlan{}, err
		}
	}
	return plan, nil
}

// planProtected adds the entries that keep one protected path read-only
// for every root that contains it (roots may nest, and a token of a
// nested root's policy carries both SIDs).
//
// Denying write on the path is not enough on NTFS: a file may also be
// deleted or renamed by whoever has FILE_DELETE_CHILD on its directory,
// and replacing a parent (.git renamed away, a new one made) would leave
// the protected entry behind under another name. So every existing
// component from the root down is pinned: DELETE denied on it and
// FILE_DELETE_CHILD denied on its directory, on those objects only.
// Siblings stay deletable through their own inherited DELETE right.
func (plan *windowsACLPlan) planProtected(prot string, roots []string) error {
	for _, root := range roots {
		if !Within(prot, root) {
			continue
		}
		if prot == root {
			// A root that is itself protected (cordon's state directory
			// given as a workspace) stays read-only as a whole.
			plan.addDeny(winACE{Path: root, SID: windowsGrantSID(root), Mask: winDenyWriteMask, Inherit: true})
			continue
		}
		comps, missing, err := winProtectedComponents(root, prot)
		if err != nil {
			return err
		}
		sid := windowsGrantSID(root)
		for i, c := range comps {
			last := i == len(comps)-1 && missing == ""
			if last {
				plan.addDeny(winACE{Path: c.Path, SID: sid, Mask: winDenyWriteMask, Inherit: c.Dir})
			} else {
				plan.addDeny(winACE{Path: c.Path, SID: sid, Mask: winDelete})
			}
			plan.addDeny(winACE{Path: filepath.Dir(c.Path), SID: sid, Mask: winFileDeleteChild})
		}
		if missing != "" && !slices.Contains(plan.Missing, prot) {
			plan.Missing = append(plan.Missing, prot)
		}
	}
	return nil
}

// addDeny merges e into an existing entry for the same object, SID and
// inheritance, so each object gets one deny entry per SID and kind.
func (plan *windowsACLPlan) addDeny(e winACE) {
	e.Deny = true
	for i, d := range plan.Denies {
		if d.Path == e.Path && d.SID == e.SID && d.Inherit == e.Inherit {
			plan.Denies[i].Mask |= e.Mask
			return
		}
	}
	plan.Denies = append(plan.Denies, e)
}

// winComponent is one existing component of a protected path.
type winComponent struct {
	Path string
	Dir  bool
}

// winProtectedComponents walks prot from root (excluded) one component at
// a time without following links. It returns the components that exist;
// missing is the first one that does not ("" when prot exists). A
// non-directory met before prot ends the walk as the last component: it is
// what keeps the rest of the path from being made (a linked worktree's
// .git file). Symbolic links, junctions and other reparse points are
// refused, as for every backend: protecting through one could protect the
// wrong place.
func winProtectedComponents(root, prot string) (comps []winComponent, missing string, err error) {
	rel, err := filepath.Rel(root, prot)
	if err != nil {
		return nil, "", fmt.Errorf("protected path %s: %w", prot, err)
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "" || part == "." {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return comps, cur, nil
		case err != nil:
			return nil, "", fmt.Errorf("protected path %s: %w", prot, err)
		case fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0:
			return nil, "", fmt.Errorf("%w: %s passes through the link or reparse point %s; refusing to build a sandbox that would follow it", errProtectedSymlink, prot, cur)
		}
		comps = append(comps, winComponent{Path: cur, Dir: fi.IsDir()})
		if !fi.IsDir() {
			return comps, "", nil
		}
	}
	return comps, "", nil
}

// winTokenKind says which token the runner starts the command with.
type winTokenKind string

const (
	// winTokenRestricted is the write-restricted token of the recipe.
	winTokenRestricted winTokenKind = "restricted"
	// winTokenCurrent is the fallback: the user's own token, so the OS
	// enforces no part of the file-system boundary.
	winTokenCurrent winTokenKind = "current"
)

// winTokenDecision is what detection found: a restricted token can be
// had, or the fallback and why. It is made once per process and reported;
// the runner is told which token to use and never downgrades by itself.
type winTokenDecision struct {
	Kind   winTokenKind
	Reason string
}

// decideWindowsToken takes the outcome of trying to build a restricted
// token at detection.
func decideWindowsToken(restrictedErr error) winTokenDecision {
	if restrictedErr == nil {
		return winTokenDecision{Kind: winTokenRestricted}
	}
	return winTokenDecision{Kind: winTokenCurrent, Reason: restrictedErr.Error()}
}

func (d winTokenDecision) describe() string {
	if d.Kind == winTokenRestricted {
		return "write-restricted token"
	}
	return "current token (fallback: " + d.Reason + ")"
}

// Unenforced rules, as they appear in status and in ConfinedArgv.
const (
	winUnenforcedReadDeny  = "read-deny list: a write-restricted token restricts writes only; enforced by the FS fence for the file tools only"
	winUnenforcedNetwork   = "network deny: not enforced (no firewall rules); confined commands can reach the network"
	winUnenforcedNewProt   = "protected paths that do not exist yet: can be created (NTFS cannot deny a name that does not exist; existing ones are kept read-only by deny entries); enforced by the FS fence for the file tools only"
	winUnenforcedWorld     = "places that grant write access to Everyone or to the logon session (world-writable directories, some named pipes and kernel objects) stay writable"
	winUnenforcedIsolation = "isolation from the user's other programs: their memory can be read (cordon's included), and programs that act on requests are not confined (COM servers such as Explorer, services, WSL: wsl.exe and System32\\bash.exe run the command outside this fence); this backend is a write fence, not an isolation boundary"
	winUnenforcedTmp       = "private /tmp: Windows has none; TEMP, TMP and TMPDIR point at the session tmp"
	winUnenforcedProtected = "protected paths: not enforced by the OS (no restricted token); enforced by the FS fence for the file tools only"
)

func winUnenforcedWrites(reason string) string {
	return "writes outside the writable roots: NOT enforced by the OS, no restricted token could be created (" + reason +
		"); commands run with the user's own token and only the FS fence keeps the boundary, for the file tools"
}

// windowsACLLimits is Limits for a detection outcome. Always partial: even
// with the restricted token, reads and the network are not restricted.
func windowsACLLimits(d winTokenDecision) (Enforcement, []string) {
	if d.Kind != winTokenRestricted {
		return EnforcementPartial, []string{
			winUnenforcedWrites(d.Reason), winUnenforcedProtected, winUnenforcedReadDeny,
			winUnenforcedNetwork, winUnenforcedIsolation, winUnenforcedTmp,
		}
	}
	return EnforcementPartial, []string{
		winUnenforcedReadDeny, winUnenforcedNetwork, winUnenforcedNewProt,
		winUnenforcedWorld, winUnenforcedIsolation, winUnenforcedTmp,
	}
}

// windowsACLUnenforced names what one confined command is not protected
// from: the same rules as Limits, but only those its policy asks for, and
// the protected paths by name.
func windowsACLUnenforced(d winTokenDecision, p ExecutionPolicy, plan windowsACLPlan) []string {
	var un []string
	if d.Kind != winTokenRestricted {
		un = append(un, winUnenforcedWrites(d.Reason))
		if len(p.Protected) > 0 {
			un = append(un, winUnenforcedProtected)
		}
	}
	if len(p.ReadDeny) > 0 {
		un = append(un, winUnenforcedReadDeny)
	}
	if p.Network == NetworkDeny {
		un = append(un, winUnenforcedNetwork)
	}
	if d.Kind == winTokenRestricted && len(plan.Missing) > 0 {
		un = append(un, "protected paths that do not exist yet can be created by the command (NTFS cannot deny a name that does not exist; the FS fence still refuses them for the file tools): "+strings.Join(plan.Missing, ", "))
	}
	if d.Kind == winTokenRestricted {
		un = append(un, winUnenforcedWorld)
	}
	return append(un, winUnenforcedIsolation)
}

// windowsEssentialEnv are variables without which common Windows programs
// fail (cmd.exe, PowerShell, git, the C runtime). None is a secret. The
// shared allowlist (env.go) matches names case-sensitively and knows only
// Unix names, so the backend carries these itself; Windows names are
// case-insensitive, hence the lookup by EqualFold.
var windowsEssentialEnv = []string{
	"PATH", "PATHEXT", "SystemRoot", "windir", "ComSpec", "SystemDrive",
	"USERPROFILE", "HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA",
	"ProgramData", "ProgramFiles", "ProgramFiles(x86)", "ProgramW6432",
	"CommonProgramFiles", "CommonProgramFiles(x86)", "CommonProgramW6432",
	"NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "OS", "USERNAME",
}

// windowsACLEnv is ConfinedArgv.Env: the essential variables from host,
// and the temp variables pointed at the session tmp. The user's own
// %TEMP% is not writable under the restricted token, and GetTempPath reads
// TMP, then TEMP.
func windowsACLEnv(host []string, tmp string) []string {
	var env []string
	for _, name := range windowsEssentialEnv {
		for _, kv := range host {
			k, v, ok := strings.Cut(kv, "=")
			if ok && k != "" && strings.EqualFold(k, name) {
				env = append(env, name+"="+v)
				break
			}
		}
	}
	if tmp != "" {
		env = append(env, "TEMP="+tmp, "TMP="+tmp, "TMPDIR="+tmp)
	}
	return env
}

// The runner is cordon itself, re-executed as
//
//	cordon __sandbox-helper --windows-acl --token restricted [--sid SID]... -- CMD [ARGS...]
//
// It makes the token, joins a kill-on-close job and starts the command.
// windowsACLRunnerFlag tells its arguments from the Linux helper's.
const windowsACLRunnerFlag = "--windows-acl"

// windowsACLRunnerConfig is what the runner is told on its command line.
type windowsACLRunnerConfig struct {
	token winTokenKind
	sids  []string // grant SIDs to add as restricting SIDs
	argv  []string
}

// args renders the config as the runner's command line (after HelperArg).
func (c windowsACLRunnerConfig) args() []string {
	a := []string{windowsACLRunnerFlag, "--token", string(c.token)}
	for _, s := range c.sids {
		a = append(a, "--sid", s)
	}
	a = append(a, "--")
	return append(a, c.argv...)
}

// parseWindowsACLRunnerArgs reads args(). It accepts only cordon's own
// grant SIDs: the runner is never a general "run with these SIDs" tool.
func parseWindowsACLRunnerArgs(args []string) (windowsACLRunnerConfig, error) {
	var c windowsACLRunnerConfig
	if len(args) == 0 || args[0] != windowsACLRunnerFlag {
		return c, fmt.Errorf("the windows-acl runner needs %s first", windowsACLRunnerFlag)
	}
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "--":
			c.argv = args[i+1:]
			if len(c.argv) == 0 {
				return c, errors.New("no command after --")
			}
			if c.token == "" {
				return c, errors.New("--token is required")
			}
			return c, nil
		case "--token", "--sid":
			flag := args[i]
			if i+1 >= len(args) {
				return c, fmt.Errorf("%s needs a value", flag)
			}
			i++
			v := args[i]
			if flag == "--sid" {
				if !validGrantSID(v) {
					return c, fmt.Errorf("--sid: %q is not a cordon grant SID", v)
				}
				c.sids = append(c.sids, v)
				continue
			}
			switch winTokenKind(v) {
			case winTokenRestricted, winTokenCurrent:
				c.token = winTokenKind(v)
			default:
				return c, fmt.Errorf("--token: unknown token %q (restricted or current)", v)
			}
		default:
			return c, fmt.Errorf("unknown runner argument %q", args[i])
		}
	}
	return c, errors.New("missing -- before the command")
}

// validGrantSID reports whether s has the shape windowsGrantSID makes.
func validGrantSID(s string) bool {
	rest, ok := strings.CutPrefix(s, winSIDGrantPrefix)
	if !ok {
		return false
	}
	parts := strings.Split(rest, "-")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if _, err := strconv.ParseUint(p, 10, 32); err != nil {
			return false
		}
	}
	return true
}

// windowsTokenRecipe is the restricted token, described. The logon SID
// and the user's own SID are only known at run time, inside the runner.
type windowsTokenRecipe struct {
	// Flags for CreateRestrictedToken.
	Flags uint32
	// DisableSIDs become deny-only (ignored when the token lacks them): an
	// elevated cordon's command gets no administrator rights.
	DisableSIDs []string
	// RestrictingSIDs: the grant SIDs of the policy's writable roots, the
	// runner's object SID, and Everyone (the null device, the console and
	// other objects meant for everyone grant write to it).
	RestrictingSIDs []string
	// AddLogonSID adds the logon session's SID as a restricting SID:
	// user32 needs write access to the window station and desktop, whose
	// DACLs grant it to the logon session.
	AddLogonSID bool
	// DefaultDACL is who may open what the command creates without an
	// inheritable parent DACL (pipes, events, its child processes): the
	// user, SYSTEM and the object SID. Without the object SID a confined
	// process could not write to the pipes it makes for its own children.
	DefaultDACLSIDs []string
	DefaultDACLUser bool
}

// windowsTokenRecipeFor is the recipe for a runner's grant SIDs.
func windowsTokenRecipeFor(grantSIDs []string, objectSID string) windowsTokenRecipe {
	restricting := append(slices.Clone(grantSIDs), objectSID, winSIDEveryone)
	return windowsTokenRecipe{
		Flags:           winDisableMaxPrivilege | winLUAToken | winWriteRestricted,
		DisableSIDs:     []string{winSIDAdministrators, winSIDLocalAdmin},
		RestrictingSIDs: restricting,
		AddLogonSID:     true,
		DefaultDACLSIDs: []string{winSIDLocalSystem, objectSID},
		DefaultDACLUser: true,
	}
}

// windowsACLDenialSignatures are how Windows programs report the denial of
// a write: the Win32 message (cmd, Go, Python's WinError 5), .NET and
// PowerShell's UnauthorizedAccessException, and the POSIX wording of the
// MSYS2 / Git Bash tools and Node.
var windowsACLDenialSignatures = []string{
	"Access is denied",
	"Access to the path",
	"Permission denied",
	"Operation not permitted",
}

// windowsACLRunnerRules: the runner reports its own failure on stderr and
// exits 125. There is no status pipe on Windows (exec.Cmd cannot pass
// extra descriptors there), so the rule is the only signal.
var windowsACLRunnerRules = []RunnerFailureRule{
	{AllowedExitCodes: []int{125}, FatalSignatures: []string{"cordon: sandbox runner failed"}},
}

// Windows errors and statuses the runner tells apart.
const (
	winErrorFileNotFound      = 2
	winErrorPathNotFound      = 3
	winErrorAccessDenied      = 5
	winErrorBadExeFormat      = 193
	winErrorElevationRequired = 740
	winStatusDLLInitFailed    = 0xC0000142
)

// windowsStartFailure maps the error of starting the command to the
// runner's exit code, shell-style: 127 not found, 126 found but not
// runnable. Anything else means the sandbox could not start it: a runner
// failure (125).
func windowsStartFailure(errno uint32) (code int, runnerFailure bool) {
	switch errno {
	case winErrorFileNotFound, winErrorPathNotFound:
		return 127, false
	case winErrorAccessDenied, winErrorBadExeFormat, winErrorElevationRequired:
		return 126, false
	}
	return 125, true
}

// windowsChildExit maps the command's exit status to the runner's exit
// code. STATUS_DLL_INIT_FAILED is what a program that cannot initialise
// under the restricted token dies with (typically: it needed a new console
// or desktop access it was not given): the sandbox kept it from starting,
// so it is reported as a runner failure, not as the command's exit.
func windowsChildExit(status uint32) (code int, failure string) {
	if status == winStatusDLLInitFailed {
		return 125, "the command could not initialise under the restricted token (STATUS_DLL_INIT_FAILED 0xC0000142)"
	}
	return int(status), ""
}

// windowsACLConfine builds the confined argv for a policy and the plan the
// caller must apply before launching it. exe is cordon's executable.
func windowsACLConfine(exe string, argv []string, cp ConfinedPolicy, d winTokenDecision) (*ConfinedArgv, windowsACLPlan, error) {
	if len(argv) == 0 {
		return nil, windowsACLPlan{}, errors.New("empty command")
	}
	p := cp.Policy()
	if err := controlPlaneOutside(p, "windows-acl"); err != nil {
		return nil, windowsACLPlan{}, err
	}
	plan, err := planWindowsACL(p)
	if err != nil {
		return nil, windowsACLPlan{}, err
	}
	runner := windowsACLRunnerConfig{token: d.Kind, argv: argv}
	if d.Kind == winTokenRestricted {
		runner.sids = plan.TokenSIDs
	}
	enf, _ := windowsACLLimits(d)
	c := &ConfinedArgv{
		Backend:            windowsACLName,
		Argv:               append([]string{exe, HelperArg}, runner.args()...),
		Env:                windowsACLEnv(os.Environ(), p.TmpDir),
		Enforcement:        enf,
		Unenforced:         windowsACLUnenforced(d, p, plan),
		DenialSignatures:   windowsACLDenialSignatures,
		RunnerFailureRules: windowsACLRunnerRules,
	}
	return c, plan, nil
}

// windowsACLProbeArgv are the probe's two commands for Windows, where
// there is neither `true` nor /bin/sh: a permissive run, and a write to
// marker then an append to canary. A failed redirection does not set
// cmd.exe's ERRORLEVEL but does trigger ||, hence the explicit exit 1.
// echo writes "ok" plus CRLF: compare the marker with its space trimmed.
func windowsACLProbeArgv(marker, canary string) (permissive, write []string) {
	permissive = []string{"cmd.exe", "/d", "/c", "exit", "0"}
	write = []string{"cmd.exe", "/d", "/c", "echo", "ok>", marker, "&", "echo", "breach>>", canary, "||", "exit", "1"}
	return permissive, write
}
