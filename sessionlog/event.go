package sessionlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Event types. A log holds only these: an unknown type is rejected on write
// and reported on read, because a verifier that accepted any type could not
// notice a changed type on the unprotected last line.
const (
	// EventSessionStart is always line 1 and only line 1. Its data is a
	// StartInfo.
	EventSessionStart = "session/start"
	// EventSandboxMode changes the session's sandbox mode from the next
	// tool call on; the last one wins. Its data is a ModeData.
	EventSandboxMode = "sandbox/mode"
	// EventToolCall records a tool call as the client sent it.
	EventToolCall = "tool/call"
	// EventToolResult records what a tool call returned.
	EventToolResult = "tool/result"
	// EventApprovalRequest records a question put to the human.
	EventApprovalRequest = "approval/request"
	// EventApprovalOutcome records the human's answer (or its absence). It
	// is fsynced before Append returns.
	EventApprovalOutcome = "approval/outcome"
	// EventProcessStart records a background process started: process_id,
	// command, mode.
	EventProcessStart = "process/start"
	// EventProcessExit records its end: process_id, exit_code, signal,
	// reason (exited, killed, session-ended, mode-narrowed).
	EventProcessExit = "process/exit"
	// EventNetworkDecision records the egress proxy's verdict on a host
	// (reserved for the restricted network).
	EventNetworkDecision = "network/decision"
	// EventRoots records the client's roots and what they do to the
	// writable roots: narrow them, or set aside (they held none of them).
	EventRoots = "roots"
)

// knownTypes is the closed set of event types.
var knownTypes = map[string]bool{
	EventSessionStart:    true,
	EventSandboxMode:     true,
	EventToolCall:        true,
	EventToolResult:      true,
	EventApprovalRequest: true,
	EventApprovalOutcome: true,
	EventProcessStart:    true,
	EventProcessExit:     true,
	EventNetworkDecision: true,
	EventRoots:           true,
}

// mustSync reports whether events of type typ are fsynced even by Append:
// the spec lets a call proceed only once they are durable.
func mustSync(typ string) bool {
	return typ == EventSandboxMode || typ == EventApprovalOutcome
}

// Sources of a sandbox/mode event: who changed the mode.
const (
	// SourceUser is the human, through `cordon mode` or a resumed session's
	// flags; it may narrow or widen.
	SourceUser = "user"
	// SourceDelegation is the parent session's effective mode, written as
	// line 2 of a sub-agent's session.
	SourceDelegation = "delegation"
	// SourceEscalation is an approved allow_session escalation.
	SourceEscalation = "escalation"
)

var knownSources = map[string]bool{
	SourceUser:       true,
	SourceDelegation: true,
	SourceEscalation: true,
}

// knownModes mirrors the sandbox modes of the spec. sessionlog is a leaf
// package and cannot import them; it still refuses other values, because a
// sandbox/mode event is the session's authority on its mode and a mode this
// build does not know must never be folded into a policy.
var knownModes = map[string]bool{
	"read-only":          true,
	"workspace-write":    true,
	"danger-full-access": true,
}

// Event is one line of a session log.
type Event struct {
	// Seq is the line's 1-based number in the log.
	Seq uint64 `json:"seq"`
	// Time is when the event was written, in UTC.
	Time time.Time `json:"time"`
	// Session is the id of the session the log belongs to.
	Session string `json:"session"`
	// Type is one of the Event… constants.
	Type string `json:"type"`
	// Data is the event's payload, a compact JSON object.
	Data json.RawMessage `json:"data"`
	// Prev is the hex SHA-256 of the previous line (of the empty string for
	// line 1).
	Prev string `json:"prev"`
}

// Decode unmarshals the event's data into v.
func (e Event) Decode(v any) error {
	if err := json.Unmarshal(e.Data, v); err != nil {
		return fmt.Errorf("decoding %s data of event %d: %w", e.Type, e.Seq, err)
	}
	return nil
}

// ModeData returns the data of a sandbox/mode event, checked the way the
// reader checks it.
func (e Event) ModeData() (ModeData, error) {
	if e.Type != EventSandboxMode {
		return ModeData{}, fmt.Errorf("event %d is %s, not %s", e.Seq, e.Type, EventSandboxMode)
	}
	return parseModeData(e.Data)
}

// StartInfo is the data of session/start: what `cordon sessions` shows and
// what a resumed server needs to know about the session it takes over.
type StartInfo struct {
	// Workspace is the session's workspace root.
	Workspace string `json:"workspace,omitempty"`
	// Mode is the sandbox mode the session started with. It is informative
	// (List shows it when no sandbox/mode event exists); resolution uses
	// sandbox/mode events and the deployment default, per the spec.
	Mode string `json:"mode,omitempty"`
	// ParentSession is the delegating session's id for a sub-agent's
	// session. When set, Create also writes line 2, a sandbox/mode event of
	// source delegation carrying Mode, which must then be the parent's
	// effective mode (the caller clamps it; this package cannot know modes'
	// order).
	ParentSession string `json:"parent_session,omitempty"`
	// PID is the serving process; Create fills in os.Getpid() when zero.
	PID int `json:"pid"`
	// Transport is "stdio" or "http", for display.
	Transport string `json:"transport,omitempty"`
	// Principal names the HTTP token the session belongs to, when it is
	// not the server's own token.
	Principal string `json:"principal,omitempty"`
	// Version is the cordon version that started the session.
	Version string `json:"version,omitempty"`
}

// check validates the fields whose values this package understands.
func (s StartInfo) check() error {
	if s.Mode != "" && !knownModes[s.Mode] {
		return fmt.Errorf("unknown sandbox mode %q", s.Mode)
	}
	if s.ParentSession != "" {
		if err := ValidateSessionID(s.ParentSession); err != nil {
			return fmt.Errorf("parent session: %w", err)
		}
		if s.Mode == "" {
			return fmt.Errorf("a delegated session needs the parent's mode")
		}
	}
	if s.PID < 0 {
		return fmt.Errorf("negative pid %d", s.PID)
	}
	return nil
}

// ModeData is the data of a sandbox/mode event.
type ModeData struct {
	// Mode is the new sandbox mode.
	Mode string `json:"mode"`
	// Source is who changed it: SourceUser, SourceDelegation or
	// SourceEscalation.
	Source string `json:"source"`
}

func (m ModeData) check() error {
	if !knownModes[m.Mode] {
		return fmt.Errorf("unknown sandbox mode %q", m.Mode)
	}
	if !knownSources[m.Source] {
		return fmt.Errorf("unknown sandbox/mode source %q", m.Source)
	}
	return nil
}

// parseModeData decodes sandbox/mode data with a closed schema: exactly the
// keys "mode" and "source", spelled exactly so (encoding/json alone would
// accept "MODE"), both known strings. The schema is closed so that even on
// the last line, which no successor protects, a changed byte is noticed.
func parseModeData(data []byte) (ModeData, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return ModeData{}, fmt.Errorf("sandbox/mode data: %w", err)
	}
	var m ModeData
	for k, v := range fields {
		var dst *string
		switch k {
		case "mode":
			dst = &m.Mode
		case "source":
			dst = &m.Source
		default:
			return ModeData{}, fmt.Errorf("sandbox/mode data has unknown field %q", k)
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return ModeData{}, fmt.Errorf("sandbox/mode data field %q: %w", k, err)
		}
	}
	if len(fields) != 2 {
		return ModeData{}, fmt.Errorf("sandbox/mode data needs exactly mode and source")
	}
	if err := m.check(); err != nil {
		return ModeData{}, err
	}
	return m, nil
}

// checkData validates an event's data for its type. It is the one rule for
// writers and readers alike, so nothing a writer accepts fails to read back.
func checkData(typ string, data []byte) error {
	switch typ {
	case EventSandboxMode:
		_, err := parseModeData(data)
		return err
	case EventSessionStart:
		// Open schema: later versions may add fields. The chain protects
		// it on every log that has more than this one line.
		var s StartInfo
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("session/start data: %w", err)
		}
		if err := s.check(); err != nil {
			return fmt.Errorf("session/start data: %w", err)
		}
	}
	return nil
}

// encodeData turns a caller's data into the compact JSON object stored in
// the line, checking the type and, for types with a schema, the data.
func encodeData(typ string, data any) ([]byte, error) {
	if !knownTypes[typ] {
		return nil, fmt.Errorf("sessionlog: unknown event type %q", typ)
	}
	raw := []byte("{}")
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			return nil, fmt.Errorf("sessionlog: encoding %s data: %w", typ, err)
		}
		if !bytes.Equal(b, []byte("null")) {
			raw = b
		}
	}
	if len(raw) > maxLineBytes {
		return nil, fmt.Errorf("%w: %s data of %d bytes, the line limit is %d", ErrTooLarge, typ, len(raw), maxLineBytes)
	}
	// Marshal already compacts; doing it again makes "compact" a property
	// this package guarantees rather than one it inherits.
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("sessionlog: encoding %s data: %w", typ, err)
	}
	raw = buf.Bytes()
	if raw[0] != '{' {
		return nil, fmt.Errorf("sessionlog: %s data must be a JSON object, not %.20s", typ, raw)
	}
	if err := checkData(typ, raw); err != nil {
		return nil, fmt.Errorf("sessionlog: %w", err)
	}
	return raw, nil
}
