package tools

import (
	"fmt"
	"slices"
	"sync"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
	"github.com/rs/zerolog"
)

// Session is one MCP session's state: its log (where its mode lives), its
// private tmp, its workspace and, for a delegated session, the ceiling
// its parent imposes.
type Session struct {
	ID        string
	Workspace string
	Tmp       *sandbox.SessionTmp
	Log       *sessionlog.Log
	// Ceiling, when set, is the widest mode this session may ever have:
	// the parent's mode for a delegated session.
	Ceiling sandbox.Mode
	// AllowSession says whether allow_session may be offered (a session
	// that can be named; see SPEC §9).
	AllowSession bool

	mu          sync.Mutex
	mode        sandbox.Mode // from the last sandbox/mode event; "" if none
	tmpWarned   bool
	clientRoots []string
	rootsKnown  bool
	client      ClientHabits
	clientKnown bool
	processes   *processes // background processes (process.go)
	foreground  foregroundRuns
	// allowedHosts are the hosts the human allowed for the session
	// (network restricted's allow_session; egress.go).
	allowedHosts []string
}

// SetClientRoots records the client's roots, which narrow the session's
// writable roots from the next call on.
func (s *Session) SetClientRoots(roots []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clientRoots, s.rootsKnown = roots, true
}

// SetClient records the client's habits, from its clientInfo.name.
func (s *Session) SetClient(h ClientHabits) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.client, s.clientKnown = h, true
}

// Client returns the client's habits (DefaultClient until SetClient).
func (s *Session) Client() ClientHabits {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.clientKnown {
		return DefaultClient
	}
	return s.client
}

// ClientKnown says whether SetClient was called.
func (s *Session) ClientKnown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientKnown
}

// ClientRoots returns the client's roots and whether they were fetched.
func (s *Session) ClientRoots() ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientRoots, s.rootsKnown
}

// InvalidateRoots makes the next call fetch the client's roots again.
func (s *Session) InvalidateRoots() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rootsKnown = false
}

// Mode returns the session's mode from its log, re-read cheaply so that a
// `cordon mode` from another terminal applies from the next call on.
func (s *Session) Mode() (sandbox.Mode, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Log != nil {
		if events, err := s.Log.Refresh(); err == nil {
			for _, e := range events {
				if e.Type != sessionlog.EventSandboxMode {
					continue
				}
				if md, err := e.ModeData(); err == nil {
					if m, err := sandbox.ParseMode(md.Mode); err == nil {
						s.mode = m
					}
				}
			}
		}
	}
	m := s.mode
	if m == "" {
		return "", false
	}
	if s.Ceiling != "" {
		m = sandbox.Narrowest(m, s.Ceiling)
	}
	return m, true
}

// LoadHistory folds a resumed session's events into its mode.
func (s *Session) LoadHistory(events []sessionlog.Event) {
	mode, _, ok := sessionlog.EffectiveSandboxMode(events)
	if !ok {
		return
	}
	if m, err := sandbox.ParseMode(mode); err == nil {
		s.mu.Lock()
		s.mode = m
		s.mu.Unlock()
	}
}

// setMode records an allow_session escalation: durable (fsynced) before the
// call proceeds.
func (s *Session) setMode(m sandbox.Mode, source string) error {
	if s.Log != nil {
		if _, err := s.Log.SetMode(string(m), source); err != nil {
			return fmt.Errorf("recording the mode change: %w", err)
		}
	}
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
	return nil
}

// record appends an event to the session log, if there is one. The log is
// evidence, not control: a failure is logged, not fatal, except where the
// caller uses setMode or recordSync.
func (s *Session) record(logger zerolog.Logger, typ string, data any) {
	if s.Log == nil {
		return
	}
	if _, err := s.Log.Append(typ, data); err != nil {
		logger.Warn().Err(err).Str("session", s.ID).Str("event", typ).Msg("session log append failed")
	}
}

// recordSync appends and fsyncs: approval outcomes must be durable before
// the call proceeds.
func (s *Session) recordSync(typ string, data any) error {
	if s.Log == nil {
		return nil
	}
	_, err := s.Log.AppendSync(typ, data)
	return err
}

func (s *Session) warnTmpOnce(logger zerolog.Logger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tmpWarned {
		s.tmpWarned = true
		logger.Warn().Str("session", s.ID).Msg("the session tmp directory was removed; recreated it empty")
	}
}

// allowHost adds host:port to the session's allowed domains.
func (s *Session) allowHost(hostPort string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.allowedHosts, hostPort) {
		s.allowedHosts = append(s.allowedHosts, hostPort)
	}
}

// AllowedHosts are the hosts the human allowed for this session.
func (s *Session) AllowedHosts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.allowedHosts)
}
