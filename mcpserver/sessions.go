package mcpserver

import (
	"encoding/base64"
	"fmt"
	"io"
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

// newSession creates a session with a fresh log and tmp directory. Under
// --delegated-from every session is delegated, on either transport: it
// starts at its parent's mode and follows it at every call. A principal's
// session runs in the principal's workspace, if it names one.
func (s *Server) newSession(id, transport string, allowSession bool, principal, workspace string) (*tools.Session, error) {
	set := s.tb.Config().Settings
	start := sessionlog.StartInfo{Workspace: firstNonEmpty(workspace, set.Workspace), Mode: string(set.Mode),
		Transport: transport, Version: s.cfg.Version, Principal: principal}
	var chain *parentChain
	if parent := s.cfg.DelegatedFrom; parent != "" {
		var pm sandbox.Mode
		var err error
		if chain, pm, err = s.openParent(parent); err != nil {
			return nil, err
		}
		start.ParentSession = parent
		start.Mode = string(sandbox.Narrowest(pm, set.Mode))
	}
	tmp, err := sandbox.NewSessionTmp(set.StateDir)
	if err != nil {
		closeChain(chain)
		return nil, err
	}
	log, err := sessionlog.Create(s.sessionsDir(), id, start)
	if err != nil {
		closeChain(chain)
		tmp.Remove()
		return nil, fmt.Errorf("creating the session log: %w", err)
	}
	sess := &tools.Session{ID: id, Workspace: workspace, Tmp: tmp, Log: log, AllowSession: allowSession}
	if chain != nil {
		sess.Parent = chain
	}
	sess.LoadHistory(log.History())
	s.log.Info().Str("session", id).Str("transport", transport).Str("parent", start.ParentSession).Str("principal", principal).Msg("session started")
	return sess, nil
}

// resumeSession reopens an ended session: its mode comes back from its log,
// and a delegated one follows its parent again.
func (s *Server) resumeSession(id string) (*tools.Session, error) {
	log, err := sessionlog.Open(s.sessionsDir(), id)
	if err != nil {
		return nil, fmt.Errorf("--session %s: %w", id, err)
	}
	history := log.History()
	var parent string
	for _, e := range history {
		if e.Type == sessionlog.EventSessionStart {
			var st sessionlog.StartInfo
			if err := e.Decode(&st); err != nil {
				log.Close()
				return nil, fmt.Errorf("--session %s: its session/start: %w", id, err)
			}
			parent = st.ParentSession
		}
	}
	if d := s.cfg.DelegatedFrom; d != "" && d != parent {
		log.Close()
		return nil, fmt.Errorf("--session %s was not delegated from %s: a session keeps the parent it started with", id, d)
	}
	var chain *parentChain
	if parent != "" {
		if chain, _, err = s.openParent(parent); err != nil {
			log.Close()
			return nil, err
		}
	}
	tmp, err := sandbox.NewSessionTmp(s.tb.Config().Settings.StateDir)
	if err != nil {
		closeChain(chain)
		log.Close()
		return nil, err
	}
	sess := &tools.Session{ID: id, Tmp: tmp, Log: log, AllowSession: true}
	if chain != nil {
		sess.Parent = chain
	}
	sess.LoadHistory(history)
	mode, _ := sess.Mode()
	s.log.Info().Str("session", id).Str("mode", string(mode)).Msg("session resumed")
	return sess, nil
}

// openParent follows the delegating session's log (and its parents'):
// its mode now is the delegated session's ceiling.
func (s *Server) openParent(parent string) (*parentChain, sandbox.Mode, error) {
	if err := sessionlog.ValidateSessionID(parent); err != nil {
		return nil, "", fmt.Errorf("--delegated-from: %w", err)
	}
	chain, err := openParentChain(s.sessionsDir(), parent)
	if err != nil {
		return nil, "", fmt.Errorf("--delegated-from %s: %w", parent, err)
	}
	pm, err := chain.Mode()
	if err != nil {
		chain.Close()
		return nil, "", fmt.Errorf("--delegated-from %s: %w", parent, err)
	}
	return chain, pm, nil
}

func closeChain(c *parentChain) {
	if c != nil {
		c.Close()
	}
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
		// Its warm sandboxes go with it: they hold its /tmp, so no other
		// session's call could take them.
		if ex := s.tb.Config().Executor; ex != nil {
			ex.EndSession(sess.Tmp.Path)
		}
	}
	if c, ok := sess.Parent.(io.Closer); ok {
		c.Close()
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
