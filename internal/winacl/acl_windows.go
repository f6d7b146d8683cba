package winacl

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Detect finds out whether this process can make the restricted token,
// by building one with the runner's own recipe. It is done once per
// process, and the outcome reported; the runner is then told which token
// to use.
func Detect() Decision {
	tok, err := newRestrictedToken(nil)
	if err == nil {
		tok.Close()
	}
	return decide(err)
}

// Apply makes sure every ACL entry the command needs exists. With the
// user's own token (the fallback) no entry would change anything, and
// none is written.
func (c *Confinement) Apply() error {
	if c.token != TokenRestricted {
		return nil
	}
	return applyPlan(c.plan)
}

// aclMu serialises this process's DACL rewrites: each is a
// read-modify-write of a whole DACL, and two at once on the same object
// would lose one's entry. Other cordon processes write the same entries
// (the SIDs are derived from paths), so a race with them loses nothing.
var aclMu sync.Mutex

// applyPlan makes sure every entry of the plan exists: grants first,
// so the inheritable grant on a root is propagated before the explicit
// deny entries below it are set.
func applyPlan(plan aclPlan) error {
	aclMu.Lock()
	defer aclMu.Unlock()
	for _, e := range plan.Grants {
		if err := ensureACE(e); err != nil {
			return fmt.Errorf("granting the sandbox write access beneath %s: %w%s", e.Path, err, ownershipHint(err))
		}
	}
	for _, e := range plan.Denies {
		if err := ensureACE(e); err != nil {
			return fmt.Errorf("keeping %s read-only in the sandbox: %w%s", e.Path, err, ownershipHint(err))
		}
	}
	return nil
}

func ownershipHint(err error) string {
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return " (cordon can only change the permissions of files and directories you own)"
	}
	return ""
}

// ensureACE adds e to its object's DACL unless an explicit entry of the
// same kind, SID and inheritance already grants (or denies) at least its
// rights. The check keeps the common case to one read: rewriting a root's
// DACL re-propagates it to the whole tree.
func ensureACE(e ace) error {
	sid, err := windows.StringToSid(e.SID)
	if err != nil {
		return fmt.Errorf("parsing SID %s: %w", e.SID, err)
	}
	sd, err := windows.GetNamedSecurityInfo(e.Path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("reading the DACL: %w", err)
	}
	var dacl *windows.ACL
	if sd != nil {
		dacl, _, err = sd.DACL()
	}
	if sd == nil || errors.Is(err, windows.ERROR_OBJECT_NOT_FOUND) || dacl == nil {
		// No DACL: everyone, Everyone among the restricting SIDs, may do
		// anything. A grant is not needed; a deny cannot be added without
		// writing a DACL that would lock everyone else out.
		if !e.Deny {
			return nil
		}
		return errors.New("it has no DACL (everyone has full access); give it one (e.g. by re-enabling inheritance) so cordon can protect it")
	}
	if err != nil {
		return fmt.Errorf("reading the DACL: %w", err)
	}
	if hasACE(dacl, sid, e) {
		return nil
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(sid)
	mode := windows.ACCESS_MODE(windows.GRANT_ACCESS)
	if e.Deny {
		mode = windows.DENY_ACCESS
	}
	inherit := uint32(windows.NO_INHERITANCE)
	if e.Inherit {
		inherit = windows.SUB_CONTAINERS_AND_OBJECTS_INHERIT
	}
	entry := []windows.EXPLICIT_ACCESS{{
		AccessPermissions: windows.ACCESS_MASK(e.Mask),
		AccessMode:        mode,
		Inheritance:       inherit,
		Trustee: windows.TRUSTEE{
			TrusteeForm:  windows.TRUSTEE_IS_SID,
			TrusteeType:  windows.TRUSTEE_IS_UNKNOWN,
			TrusteeValue: windows.TrusteeValueFromSID(sid),
		},
	}}
	// SetEntriesInAcl puts deny entries before allow entries, the order
	// in which Windows needs them for a deny to win.
	merged, err := windows.ACLFromEntries(entry, dacl)
	if err != nil {
		return fmt.Errorf("building the DACL: %w", err)
	}
	// Inherited entries in merged are dropped and recomputed from the
	// parent, and the object's protection state is kept.
	if err := windows.SetNamedSecurityInfo(e.Path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION, nil, nil, merged, nil); err != nil {
		return fmt.Errorf("writing the DACL: %w", err)
	}
	return nil
}

// hasACE reports whether dacl has an explicit entry for sid of e's kind
// and inheritance whose mask covers e's.
func hasACE(dacl *windows.ACL, sid *windows.SID, e ace) bool {
	wantType := uint8(windows.ACCESS_ALLOWED_ACE_TYPE)
	if e.Deny {
		wantType = windows.ACCESS_DENIED_ACE_TYPE
	}
	var wantFlags uint8
	if e.Inherit {
		wantFlags = windows.OBJECT_INHERIT_ACE | windows.CONTAINER_INHERIT_ACE
	}
	const flagMask = windows.OBJECT_INHERIT_ACE | windows.CONTAINER_INHERIT_ACE | windows.INHERIT_ONLY_ACE | windows.INHERITED_ACE
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE // a denied ACE has the same layout
		if windows.GetAce(dacl, i, &ace) != nil {
			continue
		}
		if ace.Header.AceType != wantType || ace.Header.AceFlags&flagMask != wantFlags {
			continue
		}
		aceSID := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		if uint32(ace.Mask)&e.Mask == e.Mask && aceSID.Equals(sid) {
			return true
		}
	}
	return false
}

// Run is the windows-acl runner: cordon, or the lean cordon-helper,
// executed as `__sandbox-helper --windows-acl …` (runnerConfig), with
// args the arguments after the helper argument. It joins a kill-on-close
// job, builds the restricted token and runs the command under it, and
// returns the command's exit code, or FailureExit with a FailurePrefix
// line on stderr when the sandbox could not be set up. It never runs the
// command with a token other than the one it was told to use.
func Run(args []string) int {
	fail := func(err error) int {
		fmt.Fprint(os.Stderr, failureLine(err))
		return FailureExit
	}
	cfg, err := parseRunnerArgs(args)
	if err != nil {
		return fail(err)
	}
	// The runner joins the job itself, before the command exists, so
	// every process the command starts is in it from its first
	// instruction. The handle is never closed: when the runner exits, or
	// is killed on a timeout, the job closes and takes the whole tree.
	if _, err := enterKillOnCloseJob(); err != nil {
		return fail(err)
	}
	var token windows.Token
	if cfg.token == TokenRestricted {
		if token, err = newRestrictedToken(cfg.sids); err != nil {
			return fail(err)
		}
	}
	path, err := exec.LookPath(cfg.argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "cordon: %s: command not found\n", cfg.argv[0])
		return 127
	}
	cmd := exec.Command(path, cfg.argv[1:]...)
	cmd.Args = cfg.argv
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = os.Environ()
	if token != 0 {
		// With a token, os/exec starts the command by CreateProcessAsUser;
		// a restricted version of the caller's own token needs no
		// privilege for that.
		cmd.SysProcAttr = &syscall.SysProcAttr{Token: syscall.Token(token)}
	}
	if err := cmd.Start(); err != nil {
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			return fail(fmt.Errorf("starting %s: %w", cfg.argv[0], err))
		}
		code, runnerFailed := startFailure(uint32(errno))
		if runnerFailed {
			return fail(fmt.Errorf("starting %s under the %s token: %w", cfg.argv[0], cfg.token, err))
		}
		fmt.Fprintf(os.Stderr, "cordon: %s: %v\n", cfg.argv[0], err)
		return code
	}
	if err := cmd.Wait(); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			return fail(fmt.Errorf("waiting for %s: %w", cfg.argv[0], err))
		}
	}
	code, failure := childExit(uint32(cmd.ProcessState.ExitCode()))
	if failure != "" {
		return fail(errors.New(failure))
	}
	return code
}

// enterKillOnCloseJob puts the calling process in a new job that kills
// all its processes when its last handle closes, refuses breakaway, and
// carries every UI restriction (jobUILimits).
func enterKillOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("creating the job object: %w", err)
	}
	var limits windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	limits.BasicLimitInformation.LimitFlags = jobKillOnJobClose | jobDieOnUnhandledException
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&limits)), uint32(unsafe.Sizeof(limits))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("setting the job's kill-on-close limit: %w", err)
	}
	ui := windows.JOBOBJECT_BASIC_UI_RESTRICTIONS{UIRestrictionsClass: jobUILimits}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectBasicUIRestrictions,
		uintptr(unsafe.Pointer(&ui)), uint32(unsafe.Sizeof(ui))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("setting the job's UI restrictions: %w", err)
	}
	if err := windows.AssignProcessToJobObject(job, windows.CurrentProcess()); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("joining the job object: %w", err)
	}
	return job, nil
}

var (
	modadvapi32               = windows.NewLazySystemDLL("advapi32.dll")
	procCreateRestrictedToken = modadvapi32.NewProc("CreateRestrictedToken")
)

// tokenDefaultDACL is TOKEN_DEFAULT_DACL.
type tokenDefaultDACL struct {
	DefaultDacl *windows.ACL
}

// newRestrictedToken builds the token of recipeFor from the
// process's own token: a primary token for CreateProcessAsUser.
func newRestrictedToken(grantSIDs []string) (windows.Token, error) {
	objectSID, err := newObjectSID(rand.Reader)
	if err != nil {
		return 0, err
	}
	recipe := recipeFor(grantSIDs, objectSID)
	var base windows.Token
	// The new token's handle gets the rights of this one: TOKEN_DUPLICATE
	// to derive it, ASSIGN_PRIMARY to start a process with it,
	// ADJUST_DEFAULT to set its default DACL.
	access := uint32(windows.TOKEN_DUPLICATE | windows.TOKEN_QUERY | windows.TOKEN_ASSIGN_PRIMARY | windows.TOKEN_ADJUST_DEFAULT)
	if err := windows.OpenProcessToken(windows.CurrentProcess(), access, &base); err != nil {
		return 0, fmt.Errorf("opening cordon's process token: %w", err)
	}
	defer base.Close()

	disable, err := sidsFromStrings(recipe.DisableSIDs)
	if err != nil {
		return 0, err
	}
	restricting, err := sidsFromStrings(recipe.RestrictingSIDs)
	if err != nil {
		return 0, err
	}
	if recipe.AddLogonSID {
		// A token without a logon session SID (some service logons) just
		// goes without: desktop access may then fail, which the probe sees.
		if logon := logonSID(base); logon != nil {
			restricting = append(restricting, windows.SIDAndAttributes{Sid: logon})
		}
	}
	tok, err := createRestrictedToken(base, recipe.Flags, disable, restricting)
	if err != nil {
		return 0, fmt.Errorf("CreateRestrictedToken: %w", err)
	}
	if err := setDefaultDACL(tok, base, recipe); err != nil {
		tok.Close()
		return 0, err
	}
	return tok, nil
}

func sidsFromStrings(list []string) ([]windows.SIDAndAttributes, error) {
	out := make([]windows.SIDAndAttributes, 0, len(list))
	for _, s := range list {
		sid, err := windows.StringToSid(s)
		if err != nil {
			return nil, fmt.Errorf("parsing SID %s: %w", s, err)
		}
		out = append(out, windows.SIDAndAttributes{Sid: sid})
	}
	return out, nil
}

// logonSID returns a copy of the token's logon session SID, or nil.
func logonSID(tok windows.Token) *windows.SID {
	groups, err := tok.GetTokenGroups()
	if err != nil {
		return nil
	}
	for _, g := range groups.AllGroups() {
		if g.Attributes&windows.SE_GROUP_LOGON_ID == windows.SE_GROUP_LOGON_ID {
			if sid, err := g.Sid.Copy(); err == nil {
				return sid
			}
		}
	}
	return nil
}

// createRestrictedToken calls CreateRestrictedToken, which x/sys/windows
// does not wrap. No privileges are listed: DISABLE_MAX_PRIVILEGE drops
// them all.
func createRestrictedToken(base windows.Token, flags uint32, disable, restricting []windows.SIDAndAttributes) (windows.Token, error) {
	// The arrays hold pointers to SIDs on the Go heap: pin them for the
	// call.
	var pin runtime.Pinner
	defer pin.Unpin()
	var pDisable, pRestrict *windows.SIDAndAttributes
	if len(disable) > 0 {
		pDisable = &disable[0]
		pin.Pin(pDisable)
	}
	if len(restricting) > 0 {
		pRestrict = &restricting[0]
		pin.Pin(pRestrict)
	}
	for _, list := range [][]windows.SIDAndAttributes{disable, restricting} {
		for _, s := range list {
			pin.Pin(s.Sid)
		}
	}
	var tok windows.Token
	r1, _, e1 := procCreateRestrictedToken.Call(
		uintptr(base), uintptr(flags),
		uintptr(len(disable)), uintptr(unsafe.Pointer(pDisable)),
		0, 0,
		uintptr(len(restricting)), uintptr(unsafe.Pointer(pRestrict)),
		uintptr(unsafe.Pointer(&tok)),
	)
	if r1 == 0 {
		return 0, e1
	}
	return tok, nil
}

// setDefaultDACL gives tok the recipe's default DACL: full access for the
// user, SYSTEM and the object SID.
func setDefaultDACL(tok, base windows.Token, recipe tokenRecipe) error {
	sids, err := sidsFromStrings(recipe.DefaultDACLSIDs)
	if err != nil {
		return err
	}
	if recipe.DefaultDACLUser {
		user, err := base.GetTokenUser()
		if err != nil {
			return fmt.Errorf("reading the token's user: %w", err)
		}
		sid, err := user.User.Sid.Copy()
		if err != nil {
			return fmt.Errorf("copying the user's SID: %w", err)
		}
		sids = append(sids, windows.SIDAndAttributes{Sid: sid})
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	entries := make([]windows.EXPLICIT_ACCESS, 0, len(sids))
	for _, s := range sids {
		pin.Pin(s.Sid)
		entries = append(entries, windows.EXPLICIT_ACCESS{
			AccessPermissions: windows.GENERIC_ALL,
			AccessMode:        windows.GRANT_ACCESS,
			Inheritance:       windows.NO_INHERITANCE,
			Trustee: windows.TRUSTEE{
				TrusteeForm:  windows.TRUSTEE_IS_SID,
				TrusteeType:  windows.TRUSTEE_IS_UNKNOWN,
				TrusteeValue: windows.TrusteeValueFromSID(s.Sid),
			},
		})
	}
	acl, err := windows.ACLFromEntries(entries, nil)
	if err != nil {
		return fmt.Errorf("building the token's default DACL: %w", err)
	}
	info := tokenDefaultDACL{DefaultDacl: acl}
	pin.Pin(acl)
	if err := windows.SetTokenInformation(tok, windows.TokenDefaultDacl, (*byte)(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		return fmt.Errorf("setting the token's default DACL: %w", err)
	}
	return nil
}

// The plan spells Windows constants out so it can be tested on any OS;
// each line below fails to compile (index out of range) if one differs.
var (
	_ = [1]struct{}{}[fileWriteData-windows.FILE_WRITE_DATA]
	_ = [1]struct{}{}[fileAppendData-windows.FILE_APPEND_DATA]
	_ = [1]struct{}{}[fileWriteEA-windows.FILE_WRITE_EA]
	_ = [1]struct{}{}[fileWriteAttributes-windows.FILE_WRITE_ATTRIBUTES]
	_ = [1]struct{}{}[deleteAccess-windows.DELETE]
	_ = [1]struct{}{}[writeDAC-windows.WRITE_DAC]
	_ = [1]struct{}{}[writeOwner-windows.WRITE_OWNER]
	_ = [1]struct{}{}[fileGenericRead-windows.FILE_GENERIC_READ]
	_ = [1]struct{}{}[fileGenericWrite-windows.FILE_GENERIC_WRITE]
	_ = [1]struct{}{}[fileGenericExecute-windows.FILE_GENERIC_EXECUTE]
	_ = [1]struct{}{}[jobKillOnJobClose-windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE]
	_ = [1]struct{}{}[jobDieOnUnhandledException-windows.JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION]
	_ = [1]struct{}{}[jobUILimits-(windows.JOB_OBJECT_UILIMIT_DESKTOP|windows.JOB_OBJECT_UILIMIT_DISPLAYSETTINGS|
		windows.JOB_OBJECT_UILIMIT_EXITWINDOWS|windows.JOB_OBJECT_UILIMIT_GLOBALATOMS|windows.JOB_OBJECT_UILIMIT_HANDLES|
		windows.JOB_OBJECT_UILIMIT_READCLIPBOARD|windows.JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS|windows.JOB_OBJECT_UILIMIT_WRITECLIPBOARD)]
	_ = [1]struct{}{}[errorAccessDenied-windows.ERROR_ACCESS_DENIED]
	_ = [1]struct{}{}[errorBadExeFormat-windows.ERROR_BAD_EXE_FORMAT]
	_ = [1]struct{}{}[errorElevationRequired-windows.ERROR_ELEVATION_REQUIRED]
	_ = [1]struct{}{}[statusDLLInitFailed-windows.STATUS_DLL_INIT_FAILED]
)
