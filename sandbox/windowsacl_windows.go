package sandbox

import (
	"fmt"
	"sync"

	"github.com/cordonhq/cordon/internal/winacl"
	"golang.org/x/sys/windows"
)

// windowsACLBackend confines with a write-restricted token and ACL grants
// on the writable roots (internal/winacl), through cordon's own runner,
// which also puts the command in a kill-on-close job.
type windowsACLBackend struct {
	once     sync.Once
	decision winacl.Decision
	version  string
}

// newWindowsACL returns the windows-acl backend.
func newWindowsACL() Backend { return &windowsACLBackend{} }

func (w *windowsACLBackend) Name() string { return windowsACLName }

// detect decides, once, between the restricted token and the fallback.
func (w *windowsACLBackend) detect() {
	w.once.Do(func() {
		w.decision = winacl.Detect()
		v := windows.RtlGetVersion()
		w.version = fmt.Sprintf("Windows %d.%d.%d, %s", v.MajorVersion, v.MinorVersion, v.BuildNumber, w.decision)
	})
}

func (w *windowsACLBackend) Version() string {
	w.detect()
	return w.version
}

func (w *windowsACLBackend) Available() error {
	w.detect()
	if _, err := helperExePath(); err != nil {
		return fmt.Errorf("finding cordon's executable for the windows-acl runner: %w", err)
	}
	return nil
}

// Limits is always partial: see windowsACLLimits.
func (w *windowsACLBackend) Limits() (Enforcement, []string) {
	w.detect()
	return windowsACLLimits(w.decision)
}

func (w *windowsACLBackend) Confine(argv []string, cp ConfinedPolicy) (*ConfinedArgv, error) {
	if err := w.Available(); err != nil {
		return nil, &UnavailableError{Reason: err.Error()}
	}
	exe, _ := helperExePath()
	c, conf, err := windowsACLConfine(exe, argv, cp, w.decision)
	if err != nil {
		return nil, err
	}
	if err := conf.Apply(); err != nil {
		return nil, err
	}
	return c, nil
}
