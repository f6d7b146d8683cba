// Package winacl is the windows-acl backend minus its glue to the sandbox
// package: which SIDs a token carries, which ACL entries a policy needs,
// the runner's command line, the fallback decision and what it leaves
// unenforced — all of which builds and is tested on every OS — and, on
// Windows, the ACL writes and the runner itself (acl_windows.go).
//
// The mechanism, in one paragraph: the command runs under a
// WRITE_RESTRICTED token. Such a token passes a write access check only if
// the object's DACL also grants the access to one of the token's
// restricting SIDs. cordon gives every writable root a SID of its own,
// grants that SID write on the root (inherited by everything below), and
// puts into each command's token only the SIDs of the roots its policy may
// write. Reads are checked as usual, which is why a write-restricted token
// cannot enforce the read-deny list.
//
// It does not import sandbox: sandbox turns its policy into a Policy and
// the result of Confine into its own ConfinedArgv.
package winacl

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

// Access rights, spelled out from winnt.h so that the plan can be tested
// anywhere; acl_windows.go fails to build if one of them differs
// from golang.org/x/sys/windows.
const (
	fileWriteData       = 0x00000002 // FILE_WRITE_DATA; FILE_ADD_FILE on a directory
	fileAppendData      = 0x00000004 // FILE_APPEND_DATA; FILE_ADD_SUBDIRECTORY on a directory
	fileWriteEA         = 0x00000010
	fileDeleteChild     = 0x00000040
	fileWriteAttributes = 0x00000100
	deleteAccess        = 0x00010000 // DELETE
	writeDAC            = 0x00040000
	writeOwner          = 0x00080000

	fileGenericRead    = 0x00120089
	fileGenericWrite   = 0x00120116
	fileGenericExecute = 0x001200A0

	// grantMask is what a writable root's SID may do: everything but
	// changing permissions or ownership, so a confined command can never
	// remove the deny entries that protect paths inside the root.
	grantMask = fileGenericRead | fileGenericWrite | fileGenericExecute | deleteAccess | fileDeleteChild

	// denyWriteMask keeps a protected path read-only: no data, no
	// attributes, no new entries in it, no delete, no permission change.
	denyWriteMask = fileWriteData | fileAppendData | fileWriteEA | fileWriteAttributes |
		deleteAccess | fileDeleteChild | writeDAC | writeOwner
)

// Token and job settings, from winnt.h as well.
const (
	disableMaxPrivilege = 0x1 // all privileges but SeChangeNotifyPrivilege go
	luaToken            = 0x4 // an elevated token loses its administrator rights
	writeRestricted     = 0x8 // restricting SIDs apply to write access only

	jobKillOnJobClose          = 0x00002000
	jobDieOnUnhandledException = 0x00000400

	// jobUILimits is every JOB_OBJECT_UILIMIT_* flag. HANDLES matters
	// most: it stops a confined process from sending window messages to the
	// user's unconfined programs on the same desktop (the Windows cousin of
	// TIOCSTI injection); the clipboard flags keep it from reading secrets
	// from, or planting commands in, the clipboard.
	jobUILimits = 0xFF
)

// Well-known SIDs the token recipe names.
const (
	sidEveryone       = "S-1-1-0"
	sidLocalSystem    = "S-1-5-18"
	sidAdministrators = "S-1-5-32-544"
	sidLocalAdmin     = "S-1-5-114" // local account and member of Administrators
)

// cordon's SIDs live under the resource-manager authority (S-1-9), which
// no account is ever issued from, with a first sub-authority that spells
// "cord" so an administrator can tell cordon's ACL entries at a glance.
const (
	sidPrefix       = "S-1-9-1668248164-"
	sidGrantPrefix  = sidPrefix + "1-" // one per writable root
	sidObjectPrefix = sidPrefix + "2-" // one per runner, for its own objects
)

// grantSID is the SID that may write beneath root. It is derived
// from the root's path, so it is the same in every cordon process and
// every session: the inherited grant on a large workspace is propagated
// once per machine instead of once per command, concurrent cordons that
// rewrite the same DACL write the same entries, and nothing accumulates.
// Carrying the SID never widens anything by itself: a restricting SID can
// only take access away. The path is lowercased because NTFS is
// case-insensitive.
func grantSID(root string) string {
	sum := sha256.Sum256([]byte("cordon windows-acl grant v1\x00" + strings.ToLower(filepath.Clean(root))))
	return sidGrantPrefix + sidSubAuthorities(sum[:16])
}

// newObjectSID returns a fresh SID for the objects one runner's
// command creates (pipes, events, its processes): the token's default DACL
// grants it, so confined processes can use what they make, and nothing
// outside that one command carries it.
func newObjectSID(random io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("making the object SID: %w", err)
	}
	return sidObjectPrefix + sidSubAuthorities(b[:]), nil
}

func sidSubAuthorities(b []byte) string {
	parts := make([]string, 0, len(b)/4)
	for i := 0; i+4 <= len(b); i += 4 {
		parts = append(parts, strconv.FormatUint(uint64(binary.BigEndian.Uint32(b[i:])), 10))
	}
	return strings.Join(parts, "-")
}

// ace is one access-control entry the backend makes sure exists.
type ace struct {
	Path string
	SID  string
	Mask uint32
	Deny bool
	// Inherit adds OBJECT_INHERIT_ACE|CONTAINER_INHERIT_ACE: the entry
	// covers everything beneath a directory, present and future. Without
	// it the entry covers the object itself only.
	Inherit bool
}

// aclPlan is what one policy needs on disk and in the token. Every
// entry is standing: grants are the reuse cache described at
// grantSID, and deny entries must outlive any one command because
// a command of another session may be writing concurrently.
type aclPlan struct {
	// TokenSIDs are the grant SIDs the command's token carries, one per
	// writable root, in WritableRoots order.
	TokenSIDs []string
	// Grants give each writable root's SID write beneath it.
	Grants []ace
	// Denies keep existing protected paths read-only and pin them: see
	// planProtected.
	Denies []ace
	// Missing are protected paths that do not exist yet. NTFS cannot deny
	// a name that does not exist, so nothing stops their creation.
	Missing []string
}

// Policy is what the backend reads of a resolved policy (sandbox's
// ExecutionPolicy): absolute paths, canonical where they exist.
type Policy struct {
	// WritableRoots are where the command may write: each gets a grant SID
	// and an inheritable grant.
	WritableRoots []string
	// Protected stay read-only inside the writable roots.
	Protected []string
	// ReadDeny, NetworkDeny: asked for, but not enforced by this backend;
	// Confine names them among what is left unenforced.
	ReadDeny    []string
	NetworkDeny bool
	// TmpDir is the session tmp, where TEMP, TMP and TMPDIR point.
	TmpDir string
}

// ErrProtectedLink is returned when a protected path is, or passes
// through, a symbolic link, junction or other reparse point. Its message
// is that of the sandbox package's error for the same refusal, which
// sandbox wraps it in.
var ErrProtectedLink = errors.New("protected path is a symlink")

// makePlan works out the ACL entries and token SIDs for a policy.
func makePlan(p Policy) (aclPlan, error) {
	var plan aclPlan
	for _, root := range p.WritableRoots {
		sid := grantSID(root)
		plan.TokenSIDs = append(plan.TokenSIDs, sid)
		plan.Grants = append(plan.Grants, ace{Path: root, SID: sid, Mask: grantMask, Inherit: true})
		// The grant reaches the root itself, DELETE included: without
		// this a command could move the whole workspace into the session
		// tmp (DELETE on the source, add-subdirectory on the target).
		plan.addDeny(ace{Path: root, SID: sid, Mask: deleteAccess})
	}
	for _, prot := range p.Protected {
		if err := plan.planProtected(prot, p.WritableRoots); err != nil {
			return aclPlan{}, err
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
func (plan *aclPlan) planProtected(prot string, roots []string) error {
	for _, root := range roots {
		if !within(prot, root) {
			continue
		}
		if prot == root {
			// A root that is itself protected (cordon's state directory
			// given as a workspace) stays read-only as a whole.
			plan.addDeny(ace{Path: root, SID: grantSID(root), Mask: denyWriteMask, Inherit: true})
			continue
		}
		comps, missing, err := protectedComponents(root, prot)
		if err != nil {
			return err
		}
		sid := grantSID(root)
		for i, c := range comps {
			last := i == len(comps)-1 && missing == ""
			if last {
				plan.addDeny(ace{Path: c.Path, SID: sid, Mask: denyWriteMask, Inherit: c.Dir})
			} else {
				plan.addDeny(ace{Path: c.Path, SID: sid, Mask: deleteAccess})
			}
			plan.addDeny(ace{Path: filepath.Dir(c.Path), SID: sid, Mask: fileDeleteChild})
		}
		if missing != "" && !slices.Contains(plan.Missing, prot) {
			plan.Missing = append(plan.Missing, prot)
		}
	}
	return nil
}

// addDeny merges e into an existing entry for the same object, SID and
// inheritance, so each object gets one deny entry per SID and kind.
func (plan *aclPlan) addDeny(e ace) {
	e.Deny = true
	for i, d := range plan.Denies {
		if d.Path == e.Path && d.SID == e.SID && d.Inherit == e.Inherit {
			plan.Denies[i].Mask |= e.Mask
			return
		}
	}
	plan.Denies = append(plan.Denies, e)
}

// component is one existing component of a protected path.
type component struct {
	Path string
	Dir  bool
}

// protectedComponents walks prot from root (excluded) one component at
// a time without following links. It returns the components that exist;
// missing is the first one that does not ("" when prot exists). A
// non-directory met before prot ends the walk as the last component: it is
// what keeps the rest of the path from being made (a linked worktree's
// .git file). Symbolic links, junctions and other reparse points are
// refused, as for every backend: protecting through one could protect the
// wrong place.
func protectedComponents(root, prot string) (comps []component, missing string, err error) {
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
			return nil, "", fmt.Errorf("%w: %s passes through the link or reparse point %s; refusing to build a sandbox that would follow it", ErrProtectedLink, prot, cur)
		}
		comps = append(comps, component{Path: cur, Dir: fi.IsDir()})
		if !fi.IsDir() {
			return comps, "", nil
		}
	}
	return comps, "", nil
}

// within reports whether path lies at or beneath dir, comparing whole
// path components: sandbox.Within, which this package cannot import.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// Token says which token the runner starts the command with.
type Token string

const (
	// TokenRestricted is the write-restricted token of the recipe.
	TokenRestricted Token = "restricted"
	// TokenCurrent is the fallback: the user's own token, so the OS
	// enforces no part of the file-system boundary.
	TokenCurrent Token = "current"
)

// Decision is what detection found: a restricted token can be
// had, or the fallback and why. It is made once per process and reported;
// the runner is told which token to use and never downgrades by itself.
type Decision struct {
	Token Token
	// Reason is why no restricted token could be made (TokenCurrent).
	Reason string
}

// decide takes the outcome of trying to build a restricted
// token at detection.
func decide(restrictedErr error) Decision {
	if restrictedErr == nil {
		return Decision{Token: TokenRestricted}
	}
	return Decision{Token: TokenCurrent, Reason: restrictedErr.Error()}
}

// String describes the token for the backend's version line.
func (d Decision) String() string {
	if d.Token == TokenRestricted {
		return "write-restricted token"
	}
	return "current token (fallback: " + d.Reason + ")"
}

// Unenforced rules, as they appear in status and in a confined command's
// description.
const (
	unenforcedReadDeny  = "read-deny list: a write-restricted token restricts writes only; enforced by the FS fence for the file tools only"
	unenforcedNetwork   = "network deny: not enforced (no firewall rules); confined commands can reach the network"
	unenforcedNewProt   = "protected paths that do not exist yet: can be created (NTFS cannot deny a name that does not exist; existing ones are kept read-only by deny entries); enforced by the FS fence for the file tools only"
	unenforcedWorld     = "places that grant write access to Everyone or to the logon session (world-writable directories, some named pipes and kernel objects) stay writable"
	unenforcedIsolation = "isolation from the user's other programs: their memory can be read (cordon's included), and programs that act on requests are not confined (COM servers such as Explorer, services, WSL: wsl.exe and System32\\bash.exe run the command outside this fence); this backend is a write fence, not an isolation boundary"
	unenforcedTmp       = "private /tmp: Windows has none; TEMP, TMP and TMPDIR point at the session tmp"
	unenforcedProtected = "protected paths: not enforced by the OS (no restricted token); enforced by the FS fence for the file tools only"
)

func unenforcedWrites(reason string) string {
	return "writes outside the writable roots: NOT enforced by the OS, no restricted token could be created (" + reason +
		"); commands run with the user's own token and only the FS fence keeps the boundary, for the file tools"
}

// Limits are the rules the backend leaves unenforced, worst first, for a
// detection outcome. There are always some: even with the restricted
// token, reads and the network are not restricted, so the backend's
// enforcement is partial.
func Limits(d Decision) []string {
	if d.Token != TokenRestricted {
		return []string{
			unenforcedWrites(d.Reason), unenforcedProtected, unenforcedReadDeny,
			unenforcedNetwork, unenforcedIsolation, unenforcedTmp,
		}
	}
	return []string{
		unenforcedReadDeny, unenforcedNetwork, unenforcedNewProt,
		unenforcedWorld, unenforcedIsolation, unenforcedTmp,
	}
}

// unenforced names what one confined command is not protected
// from: the same rules as Limits, but only those its policy asks for, and
// the protected paths by name.
func unenforced(d Decision, p Policy, plan aclPlan) []string {
	var un []string
	if d.Token != TokenRestricted {
		un = append(un, unenforcedWrites(d.Reason))
		if len(p.Protected) > 0 {
			un = append(un, unenforcedProtected)
		}
	}
	if len(p.ReadDeny) > 0 {
		un = append(un, unenforcedReadDeny)
	}
	if p.NetworkDeny {
		un = append(un, unenforcedNetwork)
	}
	if d.Token == TokenRestricted && len(plan.Missing) > 0 {
		un = append(un, "protected paths that do not exist yet can be created by the command (NTFS cannot deny a name that does not exist; the FS fence still refuses them for the file tools): "+strings.Join(plan.Missing, ", "))
	}
	if d.Token == TokenRestricted {
		un = append(un, unenforcedWorld)
	}
	return append(un, unenforcedIsolation)
}

// essentialEnv are variables without which common Windows programs
// fail (cmd.exe, PowerShell, git, the C runtime). None is a secret. The
// shared allowlist (sandbox/env.go) matches names case-sensitively and
// knows only Unix names, so the backend carries these itself; Windows
// names are case-insensitive, hence the lookup by EqualFold.
var essentialEnv = []string{
	"PATH", "PATHEXT", "SystemRoot", "windir", "ComSpec", "SystemDrive",
	"USERPROFILE", "HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA",
	"ProgramData", "ProgramFiles", "ProgramFiles(x86)", "ProgramW6432",
	"CommonProgramFiles", "CommonProgramFiles(x86)", "CommonProgramW6432",
	"NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "OS", "USERNAME",
}

// confinedEnv is a confined command's environment: the essential variables from host,
// and the temp variables pointed at the session tmp. The user's own
// %TEMP% is not writable under the restricted token, and GetTempPath reads
// TMP, then TEMP.
func confinedEnv(host []string, tmp string) []string {
	var env []string
	for _, name := range essentialEnv {
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
// runnerFlag tells its arguments from the Linux helper's.
const runnerFlag = "--windows-acl"

// runnerConfig is what the runner is told on its command line.
type runnerConfig struct {
	token Token
	sids  []string // grant SIDs to add as restricting SIDs
	argv  []string
}

// args renders the config as the runner's command line (after the
// helper argument).
func (c runnerConfig) args() []string {
	a := []string{runnerFlag, "--token", string(c.token)}
	for _, s := range c.sids {
		a = append(a, "--sid", s)
	}
	a = append(a, "--")
	return append(a, c.argv...)
}

// parseRunnerArgs reads args(). It accepts only cordon's own
// grant SIDs: the runner is never a general "run with these SIDs" tool.
func parseRunnerArgs(args []string) (runnerConfig, error) {
	var c runnerConfig
	if len(args) == 0 || args[0] != runnerFlag {
		return c, fmt.Errorf("the windows-acl runner needs %s first", runnerFlag)
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
			switch Token(v) {
			case TokenRestricted, TokenCurrent:
				c.token = Token(v)
			default:
				return c, fmt.Errorf("--token: unknown token %q (restricted or current)", v)
			}
		default:
			return c, fmt.Errorf("unknown runner argument %q", args[i])
		}
	}
	return c, errors.New("missing -- before the command")
}

// validGrantSID reports whether s has the shape grantSID makes.
func validGrantSID(s string) bool {
	rest, ok := strings.CutPrefix(s, sidGrantPrefix)
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

// tokenRecipe is the restricted token, described. The logon SID
// and the user's own SID are only known at run time, inside the runner.
type tokenRecipe struct {
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

// recipeFor is the recipe for a runner's grant SIDs.
func recipeFor(grantSIDs []string, objectSID string) tokenRecipe {
	restricting := append(slices.Clone(grantSIDs), objectSID, sidEveryone)
	return tokenRecipe{
		Flags:           disableMaxPrivilege | luaToken | writeRestricted,
		DisableSIDs:     []string{sidAdministrators, sidLocalAdmin},
		RestrictingSIDs: restricting,
		AddLogonSID:     true,
		DefaultDACLSIDs: []string{sidLocalSystem, objectSID},
		DefaultDACLUser: true,
	}
}

// DenialSignatures are how Windows programs report the denial of
// a write: the Win32 message (cmd, Go, Python's WinError 5), .NET and
// PowerShell's UnauthorizedAccessException, and the POSIX wording of the
// MSYS2 / Git Bash tools and Node.
var DenialSignatures = []string{
	"Access is denied",
	"Access to the path",
	"Permission denied",
	"Operation not permitted",
}

// The runner reports its own failure as a line on stderr that begins
// with FailurePrefix, and exits FailureExit. There is no status pipe on
// Windows (exec.Cmd cannot pass extra descriptors there), so the two are
// the only signal: sandbox makes its runner failure rule of them.
const (
	FailureExit   = 125
	FailurePrefix = "cordon: sandbox runner failed"
)

// failureLine is the runner's report of err.
func failureLine(err error) string { return FailurePrefix + ": " + err.Error() + "\n" }

// Windows errors and statuses the runner tells apart.
const (
	errorFileNotFound      = 2
	errorPathNotFound      = 3
	errorAccessDenied      = 5
	errorBadExeFormat      = 193
	errorElevationRequired = 740
	statusDLLInitFailed    = 0xC0000142
)

// startFailure maps the error of starting the command to the
// runner's exit code, shell-style: 127 not found, 126 found but not
// runnable. Anything else means the sandbox could not start it: a runner
// failure (FailureExit).
func startFailure(errno uint32) (code int, runnerFailure bool) {
	switch errno {
	case errorFileNotFound, errorPathNotFound:
		return 127, false
	case errorAccessDenied, errorBadExeFormat, errorElevationRequired:
		return 126, false
	}
	return FailureExit, true
}

// childExit maps the command's exit status to the runner's exit
// code. STATUS_DLL_INIT_FAILED is what a program that cannot initialise
// under the restricted token dies with (typically: it needed a new console
// or desktop access it was not given): the sandbox kept it from starting,
// so it is reported as a runner failure, not as the command's exit.
func childExit(status uint32) (code int, failure string) {
	if status == statusDLLInitFailed {
		return FailureExit, "the command could not initialise under the restricted token (STATUS_DLL_INIT_FAILED 0xC0000142)"
	}
	return int(status), ""
}

// Confinement is one command, confined: the runner's command line and
// environment, what it is not protected from, and the ACL entries that
// must exist before it starts (Apply, on Windows).
type Confinement struct {
	// Args are the runner's arguments: they follow cordon's executable
	// and the helper argument (sandbox.HelperArg).
	Args []string
	// Env replaces the variables of the same name in the command's
	// environment: the essential Windows variables, and the temp ones
	// pointed at the session tmp.
	Env []string
	// Unenforced names what this command is not protected from: the rules
	// of Limits its policy asks for, and the protected paths by name.
	Unenforced []string

	token Token
	plan  aclPlan
}

// Confine plans the confinement of argv under p, with the token d chose.
// The essential variables are taken from hostEnv (os.Environ()). Nothing
// is written to disk: Apply does that.
func Confine(p Policy, d Decision, argv, hostEnv []string) (*Confinement, error) {
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	plan, err := makePlan(p)
	if err != nil {
		return nil, err
	}
	runner := runnerConfig{token: d.Token, argv: argv}
	if d.Token == TokenRestricted {
		runner.sids = plan.TokenSIDs
	}
	return &Confinement{
		Args:       runner.args(),
		Env:        confinedEnv(hostEnv, p.TmpDir),
		Unenforced: unenforced(d, p, plan),
		token:      d.Token,
		plan:       plan,
	}, nil
}

// ProbeArgv are the probe's two commands for Windows, where
// there is neither `true` nor /bin/sh: a permissive run, and a write to
// marker then an append to canary. A failed redirection does not set
// cmd.exe's ERRORLEVEL but does trigger ||, hence the explicit exit 1.
// echo writes "ok" plus CRLF: compare the marker with its space trimmed.
func ProbeArgv(marker, canary string) (permissive, write []string) {
	permissive = []string{"cmd.exe", "/d", "/c", "exit", "0"}
	write = []string{"cmd.exe", "/d", "/c", "echo", "ok>", marker, "&", "echo", "breach>>", canary, "||", "exit", "1"}
	return permissive, write
}
