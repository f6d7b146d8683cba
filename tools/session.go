package tools

import (
	"fmt"
	"slices"
	"sync"

	"github.com/cordonhq/cordon/internal/secrets"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
	"github.com/rs/zerolog"
)

// Session is one MCP session's state: its log (where its mode lives), its
// private tmp, its workspace and, for a delegated session, its parent,
// whose mode is its ceiling.
type Session struct {
	ID        string
	Workspace string
	Tmp       *sandbox.SessionTmp
	Log       *sessionlog.Log
	// Parent, for a delegated session, reads the parent's mode: the
	// widest this session may have, read again at every reading of the
	// session's mode, so that narrowing the parent narrows the sub-agent
	// from its next call on (SPEC §6).
	Parent Ceiling
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
	// instructionsGiven: a result carried the instructions, for a client
	// that does not show them (TakeInstructions).
	instructionsGiven bool
	processes         *processes // background processes (process.go)
	foreground        foregroundRuns
	// allowedHosts are the hosts the human allowed for the session
	// (network restricted's allow_session; egress.go).
	allowedHosts []string
	// vault holds the session's sentinels and CA, made at its first
	// restricted call (secrets.go).
	vault *secrets.Vault
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

// TakeInstructions reports true once per session: to the one result that
// carries the instructions to a client that does not show them itself.
func (s *Session) TakeInstructions() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	given := s.instructionsGiven
	s.instructionsGiven = true
	return !given
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

// Ceiling is a delegated session's parent, read at every call.
type Ceiling interface {
	// Mode is the parent's effective mode now. An error means it cannot
	// be told, and the session is held to read-only.
	Mode() (sandbox.Mode, error)
}

// ceiling is the widest mode the session may have now, and whether it has
// one (a delegated session). A parent whose mode cannot be read holds it
// to read-only: fail closed.
func (s *Session) ceiling() (sandbox.Mode, bool) {
	if s.Parent == nil {
		return "", false
	}
	m, err := s.Parent.Mode()
	if err != nil {
		return sandbox.ReadOnly, true
	}
	return m, true
}

// ModeOr is the session's mode now: its own (its last sandbox/mode event,
// else def, the deployment's), never wider than its parent's now.
func (s *Session) ModeOr(def sandbox.Mode) sandbox.Mode {
	return s.modeNow(def).session
}

// modeNow reads the session's mode now, its parent's once: what a call
// runs under and what the narrowing check compares running commands with.
func (s *Session) modeNow(def sandbox.Mode) modeNow {
	m, ok := s.ownMode()
	if !ok {
		m = def
	}
	var n modeNow
	if c, ok := s.ceiling(); ok {
		m, n.ceiling = sandbox.Narrowest(m, c), c
	}
	n.session = m
	return n
}

// Mode returns the session's mode from its log, re-read cheaply so that a
// `cordon mode` from another terminal applies from the next call on, and
// never wider than a delegated session's parent's now. ok is false when
// the log names no mode (the deployment's applies: see ModeOr).
func (s *Session) Mode() (sandbox.Mode, bool) {
	m, ok := s.ownMode()
	if !ok {
		return "", false
	}
	if c, ok := s.ceiling(); ok {
		m = sandbox.Narrowest(m, c)
	}
	return m, true
}

// ownMode is the session's mode from its own log alone.
func (s *Session) ownMode() (sandbox.Mode, bool) {
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
	return s.mode, s.mode != ""
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
