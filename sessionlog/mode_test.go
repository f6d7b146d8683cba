package sessionlog

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEffectiveSandboxMode(t *testing.T) {
	ev := func(typ, data string) Event { return Event{Type: typ, Data: json.RawMessage(data)} }
	mode := func(m, s string) Event {
		return ev(EventSandboxMode, `{"mode":"`+m+`","source":"`+s+`"}`)
	}
	start := ev(EventSessionStart, `{"mode":"danger-full-access","pid":1}`)
	call := ev(EventToolCall, `{}`)

	for _, c := range []struct {
		name         string
		events       []Event
		mode, source string
		ok           bool
	}{
		{"none", nil, "", "", false},
		{"start's mode is not a sandbox/mode event", []Event{start, call}, "", "", false},
		{"one", []Event{start, mode("read-only", SourceDelegation), call}, "read-only", SourceDelegation, true},
		{"last wins even when narrower", []Event{start,
			mode("workspace-write", SourceDelegation),
			mode("danger-full-access", SourceEscalation),
			call,
			mode("read-only", SourceUser),
			call,
		}, "read-only", SourceUser, true},
		{"last wins when wider", []Event{start,
			mode("read-only", SourceUser),
			mode("danger-full-access", SourceUser),
		}, "danger-full-access", SourceUser, true},
		{"an unreadable last mode is not replaced by an older one", []Event{start,
			mode("read-only", SourceUser),
			mode("yolo", SourceUser),
		}, "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, s, ok := EffectiveSandboxMode(c.events)
			assert.Equal(t, []any{c.mode, c.source, c.ok}, []any{m, s, ok})
		})
	}
}
