package sandbox

import (
	"errors"
	"os"
)

// Enforcement says how much of a policy a backend enforces.
type Enforcement string

// Enforcement levels. Partial is always reported, never hidden.
const (
	EnforcementFull    Enforcement = "full"
	EnforcementPartial Enforcement = "partial"
	EnforcementNone    Enforcement = "none"
)

// ConfinedArgv is a command rewritten to run inside a backend:
// [runner] [profile args...] [--] [original argv...].
type ConfinedArgv struct {
	Backend string
	Argv    []string
	// ExtraFiles are passed to the runner as fds 3, 4, …; the argv refers
	// to them by number (the helper executable, the status pipe).
	ExtraFiles []*os.File
	// Env replaces the variables of the same name in the command's
	// environment (e.g. TMPDIR pointing at the session tmp).
	Env []string
	// Enforcement is full, or partial with the rules not enforced by the
	// OS named in Unenforced (the FS fence still enforces them for the
	// file tools).
	Enforcement        Enforcement
	Unenforced         []string
	DenialSignatures   []string
	RunnerFailureRules []RunnerFailureRule
	// statusFD is the fd number, inside the runner, of the helper's
	// status pipe; 0 when the backend has no helper.
	statusFD int
	// reapFD is the fd number of the control pipe of a helper that stays
	// as the command's subreaper (Landlock; above bwrap; above an
	// unconfined command); 0 otherwise.
	reapFD int
	// guard keeps the protected paths the backend cannot keep read-only.
	guard *launchGuard
	// lasting are the host paths whose protection a mount keeps and a
	// rename on the host would take away (bwrap): the sandbox is watched
	// and ends once one is replaced (lasting_linux.go).
	lasting []string
	// egress is the call's proxy (network restricted), closed by Cleanup.
	egress *egressEndpoint
	// warmable: the backend's sandbox, kept warm between calls, holds its
	// commands as a cold one does (docs/warm-sandbox.md).
	warmable bool
}

// Guarded lists the protected paths that this launch restores after the
// command instead of keeping them read-only while it runs.
func (c *ConfinedArgv) Guarded() []string { return c.guard.paths() }

// ReportsRunnerStatus says whether a launch tells runner failures apart by
// itself (cordon's helper reports through a status pipe). Without it, the
// caller applies RunnerFailureRules to the output.
func (c *ConfinedArgv) ReportsRunnerStatus() bool { return c.statusFD > 0 }

// Backend is an OS confinement backend.
type Backend interface {
	// Name is the backend's config name: bwrap, landlock, seatbelt, …
	Name() string
	// Version describes the mechanism (bwrap's version, Landlock's ABI).
	Version() string
	// Available says whether the backend can work on this machine at all,
	// and if not, why (the probe then proves that it really works).
	Available() error
	// Confine rewrites argv to run under the policy.
	Confine(argv []string, policy ConfinedPolicy) (*ConfinedArgv, error)
	// Limits says whether the backend enforces every rule of a policy on
	// this machine, and names the ones it does not.
	Limits() (Enforcement, []string)
}

// refusingBackend always refuses: the fail-closed end of the chain.
type refusingBackend struct{ reason string }

// unavailableBackend returns the backend that refuses everything with reason.
func unavailableBackend(reason string) Backend { return refusingBackend{reason: reason} }

func (u refusingBackend) Name() string                    { return "unavailable" }
func (u refusingBackend) Version() string                 { return "" }
func (u refusingBackend) Available() error                { return &UnavailableError{Reason: u.reason} }
func (u refusingBackend) Limits() (Enforcement, []string) { return EnforcementNone, nil }
func (u refusingBackend) Confine([]string, ConfinedPolicy) (*ConfinedArgv, error) {
	return nil, &UnavailableError{Reason: u.reason}
}

// direct returns an argv that runs unconfined: for danger-full-access and
// for a bypassed sandbox. It shares the launch path of confined commands.
func direct(argv []string) *ConfinedArgv {
	return &ConfinedArgv{Backend: "none", Argv: argv, Enforcement: EnforcementNone}
}

// confinable is every backend's first check in Confine: the backend works
// here (else fail closed), and there is a command.
func confinable(prov Backend, argv []string) error {
	if err := prov.Available(); err != nil {
		return &UnavailableError{Reason: err.Error()}
	}
	if len(argv) == 0 {
		return errors.New("empty command")
	}
	return nil
}
