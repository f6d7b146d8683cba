package sessionlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"
)

// Errors of Create and Open.
var (
	// ErrSessionExists: Create never reuses an id, so a log is never
	// silently extended by a session that did not start it.
	ErrSessionExists = errors.New("sessionlog: session already exists")
	// ErrSessionLive: another Log, in this or another process, serves the
	// session. One session has one server.
	ErrSessionLive = errors.New("sessionlog: session is already being served")
	// ErrClosed is returned by a Log's methods after Close.
	ErrClosed = errors.New("sessionlog: log is closed")
)

// Log is the writer of one session's log, held by the process serving the
// session. It is safe for concurrent use; other processes may append to the
// same log at the same time (see AppendTo) without breaking the chain.
type Log struct {
	dir, id string

	mu      sync.Mutex
	f       *os.File // the log, O_RDWR|O_APPEND
	live    *os.File // <id>.lock, exclusively locked while the Log is open
	c       chain    // the chain up to the last line this Log has read or written
	others  []Event  // other writers' events read by Append, not yet returned by Refresh
	history []Event  // the events Create wrote or Open read
	torn    int64
	closed  bool
	// dirSynced is whether the log's directory entry is durable. Create
	// leaves it to the first durable event, so that a session's start
	// costs no fsync that nothing asks for.
	dirSynced bool
}

// Create starts the log of a new session id in dir, creating dir (0700) if
// needed, and takes the session's liveness lock. It writes session/start
// with start and, for a delegated session (start.ParentSession set), a
// sandbox/mode event of source delegation carrying start.Mode, which is
// durable, with the directory entry, before Create returns. session/start
// alone is not synced (SPEC §6 asks durability of mode changes and
// approval outcomes): it reaches the disk, with the directory entry, at the
// first durable event or at Close. The log file is created 0600 and never
// over an existing one (ErrSessionExists).
func Create(dir, id string, start StartInfo) (*Log, error) {
	if err := ValidateSessionID(id); err != nil {
		return nil, fmt.Errorf("sessionlog: %w", err)
	}
	if start.PID == 0 {
		start.PID = os.Getpid()
	}
	startData, err := encodeData(EventSessionStart, start)
	if err != nil {
		return nil, err
	}
	var modeData []byte
	if start.ParentSession != "" {
		if modeData, err = encodeData(EventSandboxMode, ModeData{Mode: start.Mode, Source: SourceDelegation}); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sessionlog: %w", err)
	}

	live, err := lockLiveness(dir, id)
	if err != nil {
		return nil, err
	}
	f, err := openInDir(dir, logName(id), os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		live.Close()
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: %s", ErrSessionExists, id)
		}
		return nil, fmt.Errorf("sessionlog: creating session %s: %w", id, err)
	}
	l := &Log{dir: dir, id: id, f: f, live: live, c: newChain(id)}
	fail := func(err error) (*Log, error) {
		// The file is ours (O_EXCL) and has no complete session/start,
		// which every reader and writer refuses: remove it so that the id
		// stays usable. The liveness lock is still held, so no Open races.
		f.Close()
		_ = removeInDir(dir, logName(id))
		live.Close()
		return nil, err
	}

	ev, _, c, err := writeEvent(f, l.c, EventSessionStart, startData, false)
	l.c = c
	if err != nil {
		return fail(err)
	}
	l.history = append(l.history, ev)
	if modeData != nil {
		ev, _, c, err := writeEvent(f, l.c, EventSandboxMode, modeData, true)
		l.c = c
		if err != nil {
			return fail(err)
		}
		l.history = append(l.history, ev)
	}
	if modeData != nil {
		if err := l.syncDir(); err != nil {
			return fail(err)
		}
	}
	return l, nil
}

// Open resumes session id in dir (`cordon serve --session ID`): it takes the
// liveness lock (ErrSessionLive if another server holds it), reads and checks
// the whole log under the append lock, and cuts off a torn last line left by
// a crash, so that appends continue the chain. History returns what it read.
// A missing session's error matches fs.ErrNotExist; a broken chain's is a
// *LineError.
func Open(dir, id string) (*Log, error) {
	if err := ValidateSessionID(id); err != nil {
		return nil, fmt.Errorf("sessionlog: %w", err)
	}
	f, err := openInDir(dir, logName(id), os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("sessionlog: session %s: %w", id, err)
	}
	live, err := lockLiveness(dir, id)
	if err != nil {
		f.Close()
		return nil, err
	}
	l := &Log{dir: dir, id: id, f: f, live: live, c: newChain(id)}
	if err := l.resume(); err != nil {
		f.Close()
		live.Close()
		return nil, err
	}
	return l, nil
}

// resume replays the log from the start under the append lock.
func (l *Log) resume() error {
	if err := lockExclusive(l.f); err != nil {
		return fmt.Errorf("sessionlog: locking %s: %w", l.f.Name(), err)
	}
	defer unlock(l.f)
	evs, c, torn, err := l.c.catchUp(l.f, true)
	if err != nil {
		return err
	}
	if c.seq == 0 {
		return fmt.Errorf("%w: %s has no complete %s line", ErrCorrupt, l.f.Name(), EventSessionStart)
	}
	if torn > 0 {
		// Make the repair durable before anything chains onto it.
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("sessionlog: %w", err)
		}
	}
	l.c, l.history, l.torn = c, evs, torn
	return nil
}

// ID returns the session id.
func (l *Log) ID() string { return l.id }

// Path returns the log file's path.
func (l *Log) Path() string { return l.f.Name() }

// History returns the events Create wrote or Open read: for a resumed
// session, everything before this server took over, from which the caller
// recovers the mode (EffectiveSandboxMode).
func (l *Log) History() []Event {
	return append([]Event(nil), l.history...)
}

// TornBytes returns the length of the torn last line Open cut off, 0 if
// there was none; a caller may log it as evidence of an earlier crash.
func (l *Log) TornBytes() int64 { return l.torn }

// Append appends an event of type typ (one of the Event… constants) whose
// data is data marshalled to a JSON object (nil gives {}). sandbox/mode and
// approval/outcome events are fsynced before it returns, as AppendSync does;
// other events reach the disk with the next sync or when Close syncs.
func (l *Log) Append(typ string, data any) (Event, error) {
	return l.append(typ, data, mustSync(typ))
}

// AppendSync is Append that fsyncs the log before returning: the event is
// durable when it returns nil.
func (l *Log) AppendSync(typ string, data any) (Event, error) {
	return l.append(typ, data, true)
}

// SetMode appends, durably, a sandbox/mode event: the session runs with mode
// from its next tool call on. source is SourceUser, SourceDelegation or
// SourceEscalation.
func (l *Log) SetMode(mode, source string) (Event, error) {
	return l.AppendSync(EventSandboxMode, ModeData{Mode: mode, Source: source})
}

func (l *Log) append(typ string, data any, sync bool) (Event, error) {
	// Encode before taking any lock: marshalling a large tool result should
	// not hold up other writers.
	raw, err := encodeData(typ, data)
	if err != nil {
		return Event{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return Event{}, ErrClosed
	}
	ev, others, c, err := writeEvent(l.f, l.c, typ, raw, sync)
	l.c = c
	l.others = append(l.others, others...)
	if err == nil && sync {
		err = l.syncDir()
	}
	return ev, err
}

// syncDir makes the log's directory entry durable once: a synced event is
// only durable if the file that holds it is found after a crash.
func (l *Log) syncDir() error {
	if l.dirSynced {
		return nil
	}
	if err := syncDir(l.dir); err != nil {
		return err
	}
	l.dirSynced = true
	return nil
}

// Refresh returns the events other writers (another process running
// `cordon mode`, AppendTo) appended since this Log last read the file, in
// order, and nil when there are none; the Log's own appends are not
// returned. A server calls it before each tool call to notice a sandbox/mode
// change. When nothing changed it costs one fstat. It takes no file lock: it
// reads complete lines only and leaves a line being written for next time.
func (l *Log) Refresh() ([]Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	evs := l.others
	l.others = nil
	more, c, _, err := l.c.catchUp(l.f, false)
	if err != nil {
		// Keep what Append had read for the next call: an error here must
		// not lose a mode change.
		l.others = evs
		return nil, err
	}
	l.c = c
	return append(evs, more...), nil
}

// Close syncs the log and releases the liveness lock: the session is then
// ended, and may be resumed by Open. Closing a closed Log does nothing.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	return errors.Join(l.f.Sync(), l.syncDir(), l.f.Close(), l.live.Close())
}

// lockLiveness opens <id>.lock in dir and takes its exclusive lock for the
// life of a Log. A List or IsLive probe holds the lock only for an instant,
// so retrying for a second tells a probe (even one descheduled on a busy
// machine) from a live server, which holds it for good.
func lockLiveness(dir, id string) (*os.File, error) {
	f, err := openInDir(dir, lockName(id), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sessionlog: liveness lock of session %s: %w", id, err)
	}
	deadline := time.Now().Add(time.Second)
	for {
		ok, err := tryLock(f, true)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("sessionlog: liveness lock of session %s: %w", id, err)
		}
		if ok {
			return f, nil
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w: %s", ErrSessionLive, id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lockName is the file name of a session's liveness lock.
func lockName(id string) string { return id + ".lock" }
