package sessionlog_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cordonhq/cordon/sessionlog"
)

// A server creates the session's log, records its calls, changes mode and
// closes; the log replays to the same effective mode and verifies.
func Example() {
	dir, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(dir)

	log, err := sessionlog.Create(dir, "demo", sessionlog.StartInfo{Workspace: "/home/me/project", Mode: "workspace-write"})
	if err != nil {
		fmt.Println(err)
		return
	}
	log.Append(sessionlog.EventToolCall, map[string]string{"tool": "bash", "command": "go test ./..."})
	log.Append(sessionlog.EventToolResult, map[string]int{"exit_code": 0})
	log.SetMode("read-only", sessionlog.SourceUser)
	log.Close()

	events, err := sessionlog.Read(dir, "demo")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range events {
		fmt.Println(e.Seq, e.Type)
	}
	mode, source, _ := sessionlog.EffectiveSandboxMode(events)
	fmt.Println("mode:", mode, "from", source)
	fmt.Println("verify:", sessionlog.VerifyFile(filepath.Join(dir, "demo.jsonl")))
	// Output:
	// 1 session/start
	// 2 tool/call
	// 3 tool/result
	// 4 sandbox/mode
	// mode: read-only from user
	// verify: <nil>
}

// `cordon mode --session ID MODE` appends from another process; the server
// notices before its next tool call.
func ExampleAppendTo() {
	dir, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(dir)
	server, _ := sessionlog.Create(dir, "live", sessionlog.StartInfo{Mode: "workspace-write"})
	defer server.Close()

	// In the other process:
	sessionlog.AppendTo(dir, "live", sessionlog.EventSandboxMode,
		sessionlog.ModeData{Mode: "read-only", Source: sessionlog.SourceUser})

	// In the server, before the next tool call:
	news, _ := server.Refresh()
	if mode, source, ok := sessionlog.EffectiveSandboxMode(news); ok {
		fmt.Println("now", mode, "by", source)
	}
	news, _ = server.Refresh()
	fmt.Println(len(news), "new events")
	// Output:
	// now read-only by user
	// 0 new events
}

// Resuming a session brings its mode back from the log.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(dir)
	first, _ := sessionlog.Create(dir, "s1", sessionlog.StartInfo{Mode: "workspace-write"})
	first.SetMode("danger-full-access", sessionlog.SourceEscalation)
	first.Close()

	resumed, err := sessionlog.Open(dir, "s1")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resumed.Close()
	fmt.Println(sessionlog.EffectiveSandboxMode(resumed.History()))

	_, err = sessionlog.Open(dir, "s1")
	fmt.Println(errors.Is(err, sessionlog.ErrSessionLive))
	// Output:
	// danger-full-access escalation true
	// true
}

// Verify names the line that was changed.
func ExampleVerify() {
	dir, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(dir)
	log, _ := sessionlog.Create(dir, "audit", sessionlog.StartInfo{Mode: "read-only"})
	log.Append(sessionlog.EventToolCall, map[string]string{"command": "cat notes.txt"})
	log.Append(sessionlog.EventToolCall, map[string]string{"command": "ls"})
	log.Append(sessionlog.EventToolCall, map[string]string{"command": "pwd"})
	log.Close()

	path := filepath.Join(dir, "audit.jsonl")
	b, _ := os.ReadFile(path)
	forged := strings.Replace(string(b), "cat notes.txt", "cat ~/.ssh/id", 1)
	fmt.Println(sessionlog.Verify(strings.NewReader(string(b))))
	fmt.Println(sessionlog.Verify(strings.NewReader(forged)))
	// Output:
	// <nil>
	// sessionlog: line 2: altered: its hash does not match the prev recorded in line 3
}

func ExampleFormat() {
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	sessionlog.Format(os.Stdout, []sessionlog.Event{
		{Seq: 1, Time: at, Type: sessionlog.EventSessionStart, Data: json.RawMessage(`{"workspace":"/home/me/project","mode":"workspace-write","pid":4242}`)},
		{Seq: 2, Time: at.Add(time.Second), Type: sessionlog.EventToolCall, Data: json.RawMessage(`{"tool":"bash","command":"make test"}`)},
		{Seq: 3, Time: at.Add(2 * time.Second), Type: sessionlog.EventSandboxMode, Data: json.RawMessage(`{"mode":"read-only","source":"user"}`)},
	})
	// Output:
	// 2026-01-02T15:04:05.000Z    1 session/start    workspace=/home/me/project mode=workspace-write pid=4242
	// 2026-01-02T15:04:06.000Z    2 tool/call        tool=bash command="make test"
	// 2026-01-02T15:04:07.000Z    3 sandbox/mode     read-only (user)
}

func ExampleList() {
	dir, _ := os.MkdirTemp("", "sessions")
	defer os.RemoveAll(dir)
	ended, _ := sessionlog.Create(dir, "a-ended", sessionlog.StartInfo{Workspace: "/src/a", Mode: "workspace-write"})
	ended.Close()
	live, _ := sessionlog.Create(dir, "b-live", sessionlog.StartInfo{Workspace: "/src/b", Mode: "workspace-write"})
	defer live.Close()
	live.SetMode("read-only", sessionlog.SourceUser)

	sessions, _ := sessionlog.List(dir)
	for _, s := range sessions {
		state := "ended"
		if s.Live {
			state = "live"
		}
		fmt.Println(s.ID, s.Workspace, s.Mode, s.ModeSource, state)
	}
	// Output:
	// a-ended /src/a workspace-write start ended
	// b-live /src/b read-only user live
}

func ExampleValidateSessionID() {
	for _, id := range []string{"20260102T150405Z-5f2c", "../../.ssh/id", "a/b", ".hidden", ""} {
		fmt.Printf("%q: %v\n", id, sessionlog.ValidateSessionID(id))
	}
	// Output:
	// "20260102T150405Z-5f2c": <nil>
	// "../../.ssh/id": invalid session id: "../../.ssh/id" has character '/'; use only letters, digits, '.', '_' and '-'
	// "a/b": invalid session id: "a/b" has character '/'; use only letters, digits, '.', '_' and '-'
	// ".hidden": invalid session id: ".hidden" must start with a letter or digit
	// "": invalid session id: empty
}
