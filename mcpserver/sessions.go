package mcpserver

import (
	"encoding/base64"
	"fmt"
	"path/filepath"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
	"github.com/cordonhq/cordon/tools"
)

func (s *Server) sessionsDir() string {
	return filepath.Join(s.tb.Config().Settings.StateDir, "sessions")
}

// openProcessSession creates the process's session, resumes the one named
// by --session, or starts a delegated one under --delegated-from.
func (s *Server) openProcessSession() (*tools.Session, error) {
	id := s.cfg.SessionID
	if id != "" {
		if err := sessionlog.ValidateSessionID(id); err != nil {
			return nil, fmt.Errorf("--session: %w", err)
		}
		if live, _ := sessionlog.IsLive(s.sessionsDir(), id); live {
			return nil, fmt.Errorf("--session %s: that session is live in another cordon process", id)
		}
		if _, err := sessionlog.Read(s.sessionsDir(), id); err == nil {
			return s.resumeSession(id)
		}
	} else {
		id = sessionlog.NewSessionID()
	}
	return s.newSession(id, "stdio", true, "", "")
}

// newSession creates a session with a fresh log and tmp directory.
// A principal's session runs in the principal's workspace, if it names one.
func (s *Server) newSession(id, transport string, allowSession bool, principal, workspace string) (*tools.Session, error) {
	set := s.tb.Config().Settings
	start := sessionlog.StartInfo{Workspace: firstNonEmpty(workspace, set.Workspace), Mode: string(set.Mode),
		Transport: transport, Version: s.cfg.Version, Principal: principal}
	var ceiling sandbox.Mode
	if parent := s.cfg.DelegatedFrom; parent != "" && transport == "stdio" {
		pm, err := s.parentMode(parent)
		if err != nil {
			return nil, err
		}
		ceiling = pm
		start.ParentSession = parent
		start.Mode = string(pm)
	}
	tmp, err := sandbox.NewSessionTmp(set.StateDir)
	if err != nil {
		return nil, err
	}
	log, err := sessionlog.Create(s.sessionsDir(), id, start)
	if err != nil {
		tmp.Remove()
		return nil, fmt.Errorf("creating the session log: %w", err)
	}
	sess := &tools.Session{ID: id, Workspace: workspace, Tmp: tmp, Log: log, Ceiling: ceiling, AllowSession: allowSession}
	sess.LoadHistory(log.History())
	s.log.Info().Str("session", id).Str("transport", transport).Str("principal", principal).Msg("session started")
	return sess, nil
}

// resumeSession reopens an ended session: its mode comes back from its log.
func (s *Server) resumeSession(id string) (*tools.Session, error) {
	log, err := sessionlog.Open(s.sessionsDir(), id)
	if err != nil {
		return nil, fmt.Errorf("--session %s: %w", id, err)
	}
	tmp, err := sandbox.NewSessionTmp(s.tb.Config().Settings.StateDir)
	if err != nil {
		log.Close()
		return nil, err
	}
	sess := &tools.Session{ID: id, Tmp: tmp, Log: log, AllowSession: true}
	history := log.History()
	sess.LoadHistory(history)
	for _, e := range history {
		if e.Type == sessionlog.EventSessionStart {
			var st sessionlog.StartInfo
			if e.Decode(&st) == nil && st.ParentSession != "" {
				sess.Ceiling = sandbox.Mode(st.Mode)
			}
		}
	}
	mode, _ := sess.Mode()
	s.log.Info().Str("session", id).Str("mode", string(mode)).Msg("session resumed")
	return sess, nil
}

// parentMode is the effective mode of the delegating session: its last
// sandbox/mode event, else the deployment default, and never wider than
// this server's own default.
func (s *Server) parentMode(parent string) (sandbox.Mode, error) {
	if err := sessionlog.ValidateSessionID(parent); err != nil {
		return "", fmt.Errorf("--delegated-from: %w", err)
	}
	events, err := sessionlog.Read(s.sessionsDir(), parent)
	if err != nil {
		return "", fmt.Errorf("--delegated-from %s: %w", parent, err)
	}
	def := s.tb.Config().Settings.Mode
	m, _, ok := sessionlog.EffectiveSandboxMode(events)
	if !ok && len(events) > 0 {
		// No mode change yet: the parent runs with the mode it started with.
		var st sessionlog.StartInfo
		if events[0].Decode(&st) == nil {
			m = st.Mode
		}
	}
	pm, err := sandbox.ParseMode(m)
	if err != nil {
		return "", fmt.Errorf("--delegated-from %s: cannot tell the parent's mode (%q)", parent, m)
	}
	return sandbox.Narrowest(pm, def), nil
}

func (s *Server) closeSession(sess *tools.Session) {
	// Its background processes die with it, before its log closes (their
	// process/exit lines go there) and its tmp goes.
	sess.EndProcesses()
	if sess.Log != nil {
		sess.Log.Close()
	}
	if sess.Tmp != nil {
		sess.Tmp.Remove()
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
