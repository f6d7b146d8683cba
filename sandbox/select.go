package sandbox

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Status is what `cordon status` and sandbox_status report about the
// backend.
type Status struct {
	// State is active (probe passed), unavailable (no backend, or its probe
	// failed) or bypassed (sandbox off).
	State       string        `json:"status"`
	Backend     string        `json:"backend"`
	Version     string        `json:"version,omitempty"`
	Enforcement Enforcement   `json:"enforcement"`
	Unenforced  []string      `json:"unenforced,omitempty"`
	Reason      string        `json:"reason,omitempty"`
	Probe       time.Duration `json:"probe_ns"`
	Tried       []Attempt     `json:"tried,omitempty"`
}

// Attempt records one backend that detection tried.
type Attempt struct {
	Backend string `json:"backend"`
	OK      bool   `json:"ok"`
	Reason  string `json:"reason,omitempty"`
}

// Status states.
const (
	StateActive      = "active"
	StateUnavailable = "unavailable"
	StateBypassed    = "bypassed"
)

// Backend names accepted by --backend and the config.
var backendNames = []string{"auto", "bwrap", "landlock", "seatbelt", "windows-acl"}

// ValidBackend reports whether name may be given to --backend.
func ValidBackend(name string) error {
	for _, n := range backendNames {
		if n == name {
			return nil
		}
	}
	return fmt.Errorf("unknown backend %q: use one of %s", name, strings.Join(backendNames, ", "))
}

// Backends picks the strongest backend that passes its probe, once
// per process, or the forced one (still probed).
type Backends struct {
	// Forced names a backend; "" or "auto" detects.
	Forced string
	// StateDir is where the probe makes its scratch directory ("" for
	// the user's cache directory).
	StateDir string

	once   sync.Once
	chosen Backend
	status Status
}

// Select returns the chosen backend and its status. A backend that is
// unavailable is returned as one that refuses everything.
func (lp *Backends) Select() (Backend, Status) {
	lp.once.Do(lp.selectOnce)
	return lp.chosen, lp.status
}

func (lp *Backends) selectOnce() {
	var list []Backend
	if lp.Forced != "" && lp.Forced != "auto" {
		p := byName(lp.Forced)
		if p == nil {
			p = unavailableBackend(fmt.Sprintf("backend %q is not available on this platform", lp.Forced))
		}
		list = []Backend{p}
	} else {
		list = candidates()
	}
	var tried []Attempt
	for _, p := range list {
		res := probeBackend(p, lp.StateDir)
		tried = append(tried, Attempt{Backend: p.Name(), OK: res.OK, Reason: res.Reason})
		if res.OK {
			enf, un := p.Limits()
			lp.chosen = p
			lp.status = Status{State: StateActive, Backend: p.Name(), Version: p.Version(),
				Enforcement: enf, Unenforced: un, Probe: res.Duration, Tried: tried}
			return
		}
	}
	reason := "no sandbox backend works on this machine"
	if len(tried) > 0 {
		var parts []string
		for _, t := range tried {
			parts = append(parts, t.Backend+": "+t.Reason)
		}
		reason = strings.Join(parts, "; ")
	}
	lp.chosen = unavailableBackend(reason)
	lp.status = Status{State: StateUnavailable, Backend: "none", Enforcement: EnforcementNone, Reason: reason, Tried: tried}
}
