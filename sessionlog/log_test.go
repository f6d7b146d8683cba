package sessionlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRoundTrip(t *testing.T) {
	dir, l := newSession(t, "round-trip")
	written := l.History()
	for _, a := range []struct {
		typ  string
		data any
	}{
		{EventToolCall, map[string]any{"tool": "bash", "command": "echo <hi> & bye"}},
		{EventToolResult, json.RawMessage(` { "exit" : 0 , "out": "hi\n" } `)},
		{EventApprovalRequest, nil},
		{EventApprovalOutcome, struct {
			Decision string `json:"decision"`
		}{"deny"}},
		{EventSandboxMode, ModeData{Mode: "read-only", Source: SourceUser}},
	} {
		ev, err := l.Append(a.typ, a.data)
		require.NoError(t, err, a.typ)
		written = append(written, ev)
	}
	require.NoError(t, l.Close())

	got, err := Read(dir, "round-trip")
	require.NoError(t, err)
	assert.Equal(t, written, got)
	assert.JSONEq(t, `{"exit":0,"out":"hi\n"}`, string(got[2].Data))
	assert.Equal(t, `{}`, string(got[3].Data), "nil data is an empty object")

	var start StartInfo
	require.NoError(t, got[0].Decode(&start))
	assert.Equal(t, StartInfo{Workspace: "/work/project", Mode: "workspace-write", PID: os.Getpid(), Transport: "stdio"}, start)

	fromFile, err := ReadFile(filepath.Join(dir, "round-trip.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, got, fromFile)

	fi, err := os.Stat(filepath.Join(dir, "round-trip.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	fi, err = os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}

// TestLineFormat pins the bytes of a line and the chain: seq counts from 1
// and every prev is the hash of the line before, the first one's the hash
// of the empty string.
func TestLineFormat(t *testing.T) {
	b := sampleLog(t)
	require.True(t, bytes.HasSuffix(b, []byte("\n")))
	shape := regexp.MustCompile(`^\{"seq":([1-9][0-9]*),"time":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z","session":"sample","type":"[a-z]+/[a-z]+","data":\{.*\},"prev":"([0-9a-f]{64})"\}$`)
	prev := sha256.Sum256(nil)
	assert.Equal(t, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", hex.EncodeToString(prev[:]))
	for i, line := range lines(b) {
		m := shape.FindSubmatch(line)
		require.NotNil(t, m, "line %d: %s", i+1, line)
		assert.Equal(t, []byte{byte('1' + i)}, m[1])
		assert.Equal(t, hex.EncodeToString(prev[:]), string(m[2]), "line %d", i+1)
		prev = sha256.Sum256(line)

		// The line is plain JSON to anyone else's tools too.
		var generic map[string]any
		require.NoError(t, json.Unmarshal(line, &generic))
		assert.Len(t, generic, 6)
	}
}

func TestConcurrentAppends(t *testing.T) {
	dir, l := newSession(t, "concurrent")
	const goroutines, each = 32, 20
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				typ := EventToolCall
				if i%5 == 0 {
					typ = EventApprovalOutcome // the fsynced kind
				}
				_, err := l.Append(typ, map[string]int{"g": g, "i": i})
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	require.NoError(t, l.Close())

	f, err := os.Open(l.Path())
	require.NoError(t, err)
	defer f.Close()
	rep, err := Check(f)
	require.NoError(t, err)
	assert.Equal(t, 1+goroutines*each, rep.Events)

	evs, err := Read(dir, "concurrent")
	require.NoError(t, err)
	seen := map[[2]int]bool{}
	for _, e := range evs[1:] {
		var d struct{ G, I int }
		require.NoError(t, e.Decode(&d))
		seen[[2]int{d.G, d.I}] = true
	}
	assert.Len(t, seen, goroutines*each, "every append is in the log exactly once")
}

func TestCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	l, err := Create(dir, "a", StartInfo{Mode: "read-only"})
	require.NoError(t, err)

	_, err = Create(dir, "a", StartInfo{})
	assert.ErrorIs(t, err, ErrSessionLive, "the live session's lock is checked first")
	require.NoError(t, l.Close())
	_, err = Create(dir, "a", StartInfo{})
	assert.ErrorIs(t, err, ErrSessionExists)

	for name, start := range map[string]StartInfo{
		"unknown mode":        {Mode: "yolo"},
		"parent without mode": {ParentSession: "p"},
		"bad parent id":       {ParentSession: "../p", Mode: "read-only"},
		"negative pid":        {PID: -1},
	} {
		_, err := Create(dir, "b-"+strings.ReplaceAll(name, " ", "-"), start)
		assert.Error(t, err, name)
	}
	_, err = Create(dir, "../escape", StartInfo{})
	assert.ErrorIs(t, err, ErrInvalidSessionID)
	_, err = os.Stat(filepath.Join(dir, "b-unknown-mode.jsonl"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "a refused Create leaves no file")
}

func TestCreateDelegated(t *testing.T) {
	dir := t.TempDir()
	l, err := Create(dir, "child", StartInfo{ParentSession: "parent", Mode: "read-only"})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	evs, err := Read(dir, "child")
	require.NoError(t, err)
	require.Len(t, evs, 2)
	assert.Equal(t, EventSandboxMode, evs[1].Type)
	mode, source, ok := EffectiveSandboxMode(evs)
	assert.True(t, ok)
	assert.Equal(t, "read-only", mode)
	assert.Equal(t, SourceDelegation, source)
}

// Create syncs nothing that no one asked to be durable; the first event
// that must be durable makes the directory entry durable too, once.
func TestDirectoryEntryIsSyncedWithTheFirstDurableEvent(t *testing.T) {
	_, l := newSession(t, "lazy")
	assert.False(t, l.dirSynced, "session/start alone is not synced")
	_, err := l.Append(EventToolCall, nil)
	require.NoError(t, err)
	assert.False(t, l.dirSynced, "a tool/call is not synced")
	_, err = l.SetMode("read-only", SourceUser)
	require.NoError(t, err)
	assert.True(t, l.dirSynced, "a sandbox/mode event is durable, and so is the file that holds it")

	_, quiet := newSession(t, "quiet")
	require.NoError(t, quiet.Close())
	assert.True(t, quiet.dirSynced, "Close makes the log durable")

	child, err := Create(t.TempDir(), "child", StartInfo{ParentSession: "parent", Mode: "read-only"})
	require.NoError(t, err)
	defer child.Close()
	assert.True(t, child.dirSynced, "a delegated session's sandbox/mode is durable when Create returns")
}

func TestOpenResumes(t *testing.T) {
	dir, l := newSession(t, "resume")
	_, err := l.SetMode("read-only", SourceUser)
	require.NoError(t, err)

	_, err = Open(dir, "resume")
	assert.ErrorIs(t, err, ErrSessionLive)
	require.NoError(t, l.Close())
	_, err = l.Append(EventToolCall, nil)
	assert.ErrorIs(t, err, ErrClosed)
	assert.NoError(t, l.Close(), "Close twice is harmless")

	l2, err := Open(dir, "resume")
	require.NoError(t, err)
	defer l2.Close()
	hist := l2.History()
	require.Len(t, hist, 2)
	mode, _, ok := EffectiveSandboxMode(hist)
	assert.True(t, ok)
	assert.Equal(t, "read-only", mode)
	assert.Zero(t, l2.TornBytes())

	ev, err := l2.Append(EventToolCall, map[string]string{"tool": "bash"})
	require.NoError(t, err)
	assert.Equal(t, uint64(3), ev.Seq)
	assert.NoError(t, VerifyFile(l2.Path()))

	_, err = Open(dir, "missing")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = Open(dir, "a/b")
	assert.ErrorIs(t, err, ErrInvalidSessionID)
	_, err = os.Stat(filepath.Join(dir, "missing.lock"))
	assert.ErrorIs(t, err, fs.ErrNotExist, "opening a missing session creates nothing")
}

func TestOpenRefusesEmptyLog(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "empty.jsonl"), []byte(`{"seq":1,"ti`), 0o600))
	_, err := Open(dir, "empty")
	assert.ErrorIs(t, err, ErrCorrupt)
	_, err = AppendTo(dir, "empty", EventToolCall, nil)
	assert.ErrorIs(t, err, ErrCorrupt)
}

// lowerLineLimit makes "too large" cheap to reach.
func lowerLineLimit(t *testing.T) {
	maxLineBytes = 64 << 10
	t.Cleanup(func() { maxLineBytes = MaxLineBytes })
}

func TestAppendRefuses(t *testing.T) {
	lowerLineLimit(t)
	_, l := newSession(t, "refuse")
	for name, c := range map[string]struct {
		typ  string
		data any
	}{
		"unknown type":          {"tool/other", nil},
		"second session/start":  {EventSessionStart, StartInfo{}},
		"data not an object":    {EventToolCall, "a string"},
		"data not marshallable": {EventToolCall, map[string]any{"f": func() {}}},
		"unknown mode":          {EventSandboxMode, ModeData{Mode: "yolo", Source: SourceUser}},
		"unknown source":        {EventSandboxMode, ModeData{Mode: "read-only", Source: "model"}},
		"extra mode field":      {EventSandboxMode, map[string]string{"mode": "read-only", "source": "user", "x": "y"}},
		"mode key in caps":      {EventSandboxMode, map[string]string{"MODE": "read-only", "source": "user"}},
		"missing source":        {EventSandboxMode, map[string]string{"mode": "read-only"}},
		"too large":             {EventToolResult, map[string]string{"out": strings.Repeat("x", maxLineBytes)}},
	} {
		_, err := l.Append(c.typ, c.data)
		assert.Error(t, err, name)
	}
	_, err := l.Append(EventToolResult, map[string]string{"out": strings.Repeat("x", maxLineBytes)})
	assert.ErrorIs(t, err, ErrTooLarge)
	_, err = l.Append(EventToolResult, map[string]string{"out": strings.Repeat("x", maxLineBytes-100)})
	assert.ErrorIs(t, err, ErrTooLarge, "data that fits but whose line does not")
	assert.NoError(t, VerifyFile(l.Path()), "refused appends leave the log intact")
	assert.Len(t, l.History(), 1)
}

// TestRefresh: a mode change appended by another writer (here another file
// description in the same process, which flock treats like another
// process) reaches the serving Log exactly once, whether Refresh or one of
// the Log's own appends reads it first.
func TestRefresh(t *testing.T) {
	dir, l := newSession(t, "refresh")
	evs, err := l.Refresh()
	require.NoError(t, err)
	assert.Empty(t, evs)

	_, err = AppendTo(dir, "refresh", EventSandboxMode, ModeData{Mode: "read-only", Source: SourceUser})
	require.NoError(t, err)
	evs, err = l.Refresh()
	require.NoError(t, err)
	require.Len(t, evs, 1)
	mode, source, ok := EffectiveSandboxMode(evs)
	assert.Equal(t, []any{"read-only", SourceUser, true}, []any{mode, source, ok})
	evs, err = l.Refresh()
	require.NoError(t, err)
	assert.Empty(t, evs)

	// Another writer, then our append (which must chain after it), then
	// Refresh still reports the other writer's event.
	_, err = AppendTo(dir, "refresh", EventSandboxMode, ModeData{Mode: "danger-full-access", Source: SourceUser})
	require.NoError(t, err)
	own, err := l.Append(EventToolCall, nil)
	require.NoError(t, err)
	assert.Equal(t, uint64(4), own.Seq)
	evs, err = l.Refresh()
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, uint64(3), evs[0].Seq)
	evs, err = l.Refresh()
	require.NoError(t, err)
	assert.Empty(t, evs)

	// A fragment of a write in progress is left for later.
	f, err := os.OpenFile(l.Path(), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":5,"time":`)
	require.NoError(t, err)
	f.Close()
	evs, err = l.Refresh()
	require.NoError(t, err)
	assert.Empty(t, evs)
	assert.NoError(t, VerifyFile(l.Path()))
	_, err = l.Append(EventToolResult, nil)
	require.NoError(t, err, "under the lock, the fragment is a dead writer's and is cut off")
	assert.NoError(t, VerifyFile(l.Path()))
}

func TestLogNoticesTruncation(t *testing.T) {
	_, l := newSession(t, "shrink")
	_, err := l.Append(EventToolCall, nil)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(l.Path(), 10))
	_, err = l.Append(EventToolCall, nil)
	assert.ErrorIs(t, err, ErrCorrupt)
	_, err = l.Refresh()
	assert.ErrorIs(t, err, ErrCorrupt)
}

// TestTornTail covers what a crash can leave at the end of a log, simulated
// by writing it: replay ignores it, Open cuts it off, appending continues
// the chain and the log verifies afterwards.
func TestTornTail(t *testing.T) {
	for _, c := range []struct {
		name string
		tail string
		// verifyOK: Verify passes before the repair (a fragment without a
		// newline is a crash artefact, not damage).
		verifyOK bool
	}{
		{"half a line", `{"seq":7,"time":"2026-01-02T15:04:05Z","session":"torn","type":"tool/ca`, true},
		{"all but the newline", `{"seq":7,"time":"2026-01-02T15:04:05Z","session":"torn","type":"tool/call","data":{},"prev":"` + strings.Repeat("0", 64) + `"}`, true},
		{"zeros", strings.Repeat("\x00", 300), true},
		{"one byte", `{`, true},
		{"garbage line", strings.Repeat("\x00", 40) + `"},"prev":"abc"}` + "\n", false},
		{"garbage line and fragment", "\x00\x00\x00\n{\"seq\":7", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			good := sampleLog(t)
			dir := t.TempDir()
			path := filepath.Join(dir, "sample.jsonl")
			require.NoError(t, os.WriteFile(path, append(good, c.tail...), 0o600))

			evs, err := Read(dir, "sample")
			require.NoError(t, err)
			assert.Len(t, evs, 6)

			f, err := os.Open(path)
			require.NoError(t, err)
			rep, err := Check(f)
			f.Close()
			if c.verifyOK {
				require.NoError(t, err)
				assert.Equal(t, int64(len(c.tail)), rep.TornBytes)
				assert.Equal(t, 7, rep.TornLine)
			} else {
				var le *LineError
				require.ErrorAs(t, err, &le)
				assert.Equal(t, 7, le.Line)
			}

			l, err := Open(dir, "sample")
			require.NoError(t, err)
			assert.Equal(t, int64(len(c.tail)), l.TornBytes())
			assert.Len(t, l.History(), 6)
			ev, err := l.Append(EventToolCall, map[string]string{"after": "crash"})
			require.NoError(t, err)
			assert.Equal(t, uint64(7), ev.Seq)
			require.NoError(t, l.Close())

			require.NoError(t, VerifyFile(path))
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.True(t, bytes.HasPrefix(b, good), "the intact lines are untouched")
		})
	}
}

// TestAppendRefusesBrokenChain: a writer never extends a chain it cannot
// verify.
func TestAppendRefusesBrokenChain(t *testing.T) {
	good := sampleLog(t)
	dir := t.TempDir()
	ls := lines(good)
	ls[2], ls[3] = ls[3], ls[2]
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sample.jsonl"), append(bytes.Join(ls, []byte("\n")), '\n'), 0o600))
	_, err := AppendTo(dir, "sample", EventToolCall, nil)
	var le *LineError
	require.ErrorAs(t, err, &le)
	_, err = Open(dir, "sample")
	assert.ErrorIs(t, err, ErrCorrupt)
	evs, err := Read(dir, "sample")
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.Len(t, evs, 2, "Read returns the events before the bad line")
}

func TestReadChecksSessionID(t *testing.T) {
	good := sampleLog(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.jsonl"), good, 0o600))
	_, err := Read(dir, "other")
	var le *LineError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 1, le.Line)
	assert.Contains(t, le.Reason, `"sample"`)
	// A renamed copy still verifies on its own: the file name is not part
	// of the content.
	assert.NoError(t, VerifyFile(filepath.Join(dir, "other.jsonl")))
	_, err = Read(dir, "missing")
	assert.True(t, errors.Is(err, fs.ErrNotExist))
}
