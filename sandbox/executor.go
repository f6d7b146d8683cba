package sandbox

import (
	"fmt"
)

// Requirement says what to do when no backend works.
type Requirement string

// Requirements, from --sandbox-required (default), --sandbox, --no-sandbox.
const (
	Required Requirement = "required" // fail closed
	Auto     Requirement = "auto"     // warn and run unconfined
	Off      Requirement = "off"      // never confine (bypassed)
)

// ParseRequirement accepts required, auto or off.
func ParseRequirement(s string) (Requirement, error) {
	switch Requirement(s) {
	case Required, Auto, Off:
		return Requirement(s), nil
	}
	return "", fmt.Errorf("unknown sandbox setting %q: use required, auto or off", s)
}

// Executor turns a policy and an argv into what to launch. It is the one
// place that decides between confined, unconfined (danger) and refused, so
// `cordon exec` and the bash tool cannot differ.
type Executor struct {
	Backends    *Backends
	Requirement Requirement
	// Warn is told when a command runs unconfined because no backend
	// works and the requirement is auto.
	Warn func(string)
	// Warm runs foreground calls without a terminal in warm sandboxes
	// (warm_linux.go), where the backend allows it: one bwrap per policy,
	// kept between calls. The server sets it; a one-off command has
	// nothing to keep warm.
	Warm bool
	warm warmPool
}

// Close ends the executor's idle warm sandboxes.
func (e *Executor) Close() { e.warm.closeAll() }

// EndSession ends the warm sandboxes of the session whose private /tmp is
// tmpDir, once the session has ended and removed it: their key holds that
// /tmp, so no later call could take them, and they would idle on.
func (e *Executor) EndSession(tmpDir string) { e.warm.endSession(tmpDir) }

// Status reports the backend state as this executor sees it.
func (e *Executor) Status() Status {
	if e.Requirement == Off {
		return Status{State: StateBypassed, Backend: "none", Enforcement: EnforcementNone,
			Reason: "the sandbox is off (--no-sandbox or sandbox = \"off\"): commands run unconfined"}
	}
	_, st := e.Backends.Select()
	return st
}

// Prepare returns the argv to launch for a policy. A confined mode with no
// working backend fails with an UnavailableError unless the requirement
// allows running unconfined.
func (e *Executor) Prepare(argv []string, p ExecutionPolicy) (*ConfinedArgv, error) {
	return e.prepare(argv, p, EgressHooks{})
}

func (e *Executor) prepare(argv []string, p ExecutionPolicy, hooks EgressHooks) (*ConfinedArgv, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	if p.IsDanger() || e.Requirement == Off {
		return unconfined(argv), nil
	}
	prov, st := e.Backends.Select()
	if st.State != StateActive {
		if e.Requirement == Auto {
			if e.Warn != nil {
				e.Warn("running unconfined: " + st.Reason)
			}
			return unconfined(argv), nil
		}
		return nil, &UnavailableError{Reason: st.Reason}
	}
	cp, err := p.ToConfined()
	if err != nil {
		return nil, err
	}
	if p.Network == NetworkRestricted {
		if cp.egress, err = startEgress(p, hooks, prov.Name() == "bwrap"); err != nil {
			return nil, &UnavailableError{Reason: err.Error()}
		}
	}
	c, err := prov.Confine(argv, cp)
	if err != nil {
		cp.egress.close()
		return nil, err
	}
	c.egress = cp.egress
	if c.egress != nil {
		c.Env = append(c.Env, c.egress.env()...)
	}
	return c, nil
}
