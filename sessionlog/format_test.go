package sessionlog

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFormat(t *testing.T) {
	at := time.Date(2026, 1, 2, 15, 4, 5, 123456789, time.UTC)
	ev := func(seq uint64, typ, data string) Event {
		return Event{Seq: seq, Time: at, Session: "s", Type: typ, Data: json.RawMessage(data)}
	}
	for _, c := range []struct {
		name string
		ev   Event
		want string
	}{
		{"start", ev(1, EventSessionStart, `{"workspace":"/home/me/proj","mode":"read-only","pid":42}`),
			"2026-01-02T15:04:05.123Z    1 session/start    workspace=/home/me/proj mode=read-only pid=42"},
		{"mode", ev(2, EventSandboxMode, `{"mode":"workspace-write","source":"user"}`),
			"2026-01-02T15:04:05.123Z    2 sandbox/mode     workspace-write (user)"},
		{"quoting", ev(3, EventToolCall, `{"tool":"bash","command":"ls -l","empty":"","args":["a",1],"ok":true}`),
			`2026-01-02T15:04:05.123Z    3 tool/call        tool=bash command="ls -l" empty="" args=["a",1] ok=true`},
		{"empty data", ev(4, EventApprovalRequest, `{}`),
			"2026-01-02T15:04:05.123Z    4 approval/request"},
		{"terminal escapes are defused", ev(5, EventToolResult, `{"out":"\u001b[31mred\u001b[0m","nested":{"x":"\u001b]0;title\u0007"},"bidi":"a\u202eb"}`),
			`2026-01-02T15:04:05.123Z    5 tool/result      out="\x1b[31mred\x1b[0m" nested={"x":"\u001b]0;title\u0007"} bidi="a\u202eb"`},
		{"raw escape in nested", ev(6, EventToolResult, "{\"n\":[\"\u009b2J\"]}"),
			`2026-01-02T15:04:05.123Z    6 tool/result      n=["\u009b2J"]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			require.NoError(t, Format(&b, []Event{c.ev}))
			assert.Equal(t, c.want+"\n", b.String())
		})
	}

	var b strings.Builder
	require.NoError(t, Format(&b, []Event{ev(7, EventToolResult, `{"out":"`+strings.Repeat("é", 500)+`"}`)}))
	out := strings.TrimSuffix(b.String(), "\n")
	assert.True(t, strings.HasSuffix(out, "é…"))
	assert.Equal(t, maxSummaryRunes, len([]rune(out[strings.Index(out, "out="):])))
	assert.NotContains(t, out, "\n")
}
