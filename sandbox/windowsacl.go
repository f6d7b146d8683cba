package sandbox

import (
	"errors"
	"os"

	"github.com/cordonhq/cordon/internal/winacl"
)

// This file is the windows-acl backend's glue that builds and is tested on
// every OS: from an ExecutionPolicy to internal/winacl's Policy, and from
// its Confinement to a ConfinedArgv. The backend itself (the ACL plan, the
// token, the runner) is internal/winacl; windowsacl_windows.go is the
// Backend.

// windowsACLName is the backend's config name.
const windowsACLName = "windows-acl"

// windowsACLPolicy is what the backend reads of a policy.
func windowsACLPolicy(p ExecutionPolicy) winacl.Policy {
	return winacl.Policy{
		WritableRoots: p.WritableRoots,
		Protected:     p.Protected,
		ReadDeny:      p.ReadDeny,
		NetworkDeny:   p.Network == NetworkDeny,
		TmpDir:        p.TmpDir,
	}
}

// windowsACLLimits is Limits for a detection outcome. Always partial: even
// with the restricted token, reads and the network are not restricted.
func windowsACLLimits(d winacl.Decision) (Enforcement, []string) {
	return EnforcementPartial, winacl.Limits(d)
}

// windowsACLRunnerRules: the runner reports its own failure on stderr and
// exits with its own code. There is no status pipe on Windows (exec.Cmd
// cannot pass extra descriptors there), so the rule is the only signal.
var windowsACLRunnerRules = []RunnerFailureRule{
	{AllowedExitCodes: []int{winacl.FailureExit}, FatalSignatures: []string{winacl.FailurePrefix}},
}

// windowsACLConfine builds the confined argv for a policy and the
// confinement the caller must apply before launching it. exe is cordon's
// executable.
func windowsACLConfine(exe string, argv []string, cp ConfinedPolicy, d winacl.Decision) (*ConfinedArgv, *winacl.Confinement, error) {
	if len(argv) == 0 {
		return nil, nil, errors.New("empty command")
	}
	p := cp.Policy()
	if err := controlPlaneOutside(p, windowsACLName); err != nil {
		return nil, nil, err
	}
	if p.Network == NetworkRestricted {
		// Nothing here keeps a command off the network: proxy variables
		// alone would only look like a restriction.
		return nil, nil, &UnavailableError{Reason: "network restricted needs a backend that can confine the network; windows-acl cannot: use network deny or allow"}
	}
	conf, err := winacl.Confine(windowsACLPolicy(p), d, argv, os.Environ())
	if errors.Is(err, winacl.ErrProtectedLink) {
		err = protectedLinkError{err}
	}
	if err != nil {
		return nil, nil, err
	}
	enf, _ := windowsACLLimits(d)
	c := &ConfinedArgv{
		Backend:            windowsACLName,
		Argv:               append([]string{exe, HelperArg}, conf.Args...),
		Env:                conf.Env,
		Enforcement:        enf,
		Unenforced:         conf.Unenforced,
		DenialSignatures:   winacl.DenialSignatures,
		RunnerFailureRules: windowsACLRunnerRules,
	}
	return c, conf, nil
}

// protectedLinkError is winacl's refusal of a protected path that passes
// through a link, with its message, recognisable as errProtectedSymlink
// like the same refusal of every other backend.
type protectedLinkError struct{ err error }

func (e protectedLinkError) Error() string   { return e.err.Error() }
func (e protectedLinkError) Unwrap() []error { return []error{errProtectedSymlink, e.err} }
