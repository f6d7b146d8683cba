package sessionlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"
)

// ModeSourceStart is Summary.ModeSource when a session has no sandbox/mode
// event and Summary.Mode is the mode its session/start recorded.
const ModeSourceStart = "start"

// Summary describes one session for `cordon sessions`.
type Summary struct {
	// ID is the session id.
	ID string `json:"id"`
	// Start is when session/start was written.
	Start time.Time `json:"start,omitzero"`
	// Workspace is the session's workspace root.
	Workspace string `json:"workspace,omitempty"`
	// ParentSession is the delegating session of a sub-agent's session.
	ParentSession string `json:"parent_session,omitempty"`
	// Mode is the effective sandbox mode: the last sandbox/mode event's, or
	// the mode session/start recorded. Empty when the log is corrupt, since
	// a mode read from a broken log cannot be trusted.
	Mode string `json:"mode,omitempty"`
	// ModeSource is the source of the last sandbox/mode event, or
	// ModeSourceStart.
	ModeSource string `json:"mode_source,omitempty"`
	// Live reports whether a process serves the session now.
	Live bool `json:"live"`
	// Events is the number of intact events.
	Events int `json:"events"`
	// Calls is the number of tool calls: none for a client that only
	// connected (a health check such as `claude mcp list`).
	Calls int `json:"calls"`
	// Error says what is wrong with the log, if anything.
	Error string `json:"error,omitempty"`
}

// List summarizes every session whose log is in dir, oldest first. A
// missing dir has no sessions. A log that cannot be read or is corrupt is
// listed with Error set rather than failing the listing. Files whose names
// are not <valid-id>.jsonl are not sessions and are skipped.
func List(dir string) ([]Summary, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sessionlog: listing sessions: %w", err)
	}
	var out []Summary
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !e.Type().IsRegular() || ValidateSessionID(id) != nil {
			continue
		}
		out = append(out, summarizeSession(dir, id))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.Before(out[j].Start)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

func summarizeSession(dir, id string) Summary {
	s := Summary{ID: id}
	evs, readErr := Read(dir, id)
	s.Events = len(evs)
	for _, ev := range evs {
		if ev.Type == EventToolCall {
			s.Calls++
		}
	}
	var start StartInfo
	if len(evs) > 0 {
		s.Start = evs[0].Time
		if err := evs[0].Decode(&start); err == nil {
			s.Workspace, s.ParentSession = start.Workspace, start.ParentSession
		}
	}
	switch {
	case readErr != nil:
		s.Error = readErr.Error()
	case len(evs) == 0:
		s.Error = "no complete " + EventSessionStart + " line"
	default:
		if mode, source, ok := EffectiveSandboxMode(evs); ok {
			s.Mode, s.ModeSource = mode, source
		} else if start.Mode != "" {
			s.Mode, s.ModeSource = start.Mode, ModeSourceStart
		}
	}
	live, err := IsLive(dir, id)
	s.Live = live
	if err != nil && s.Error == "" {
		s.Error = err.Error()
	}
	return s
}

// IsLive reports whether a process holds session id's liveness lock, that
// is, serves the session now. It never blocks. A session that never had a
// lock file is not live.
func IsLive(dir, id string) (bool, error) {
	if err := ValidateSessionID(id); err != nil {
		return false, fmt.Errorf("sessionlog: %w", err)
	}
	f, err := openInDir(dir, lockName(id), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sessionlog: liveness of session %s: %w", id, err)
	}
	// Closing the probe's descriptor releases the shared lock if we got it.
	defer f.Close()
	free, err := tryLock(f, false)
	if err != nil {
		return false, fmt.Errorf("sessionlog: liveness of session %s: %w", id, err)
	}
	return !free, nil
}
