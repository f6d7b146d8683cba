package sessionlog

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// ErrTooLarge is returned for an event whose line would exceed MaxLineBytes.
var ErrTooLarge = errors.New("sessionlog: event too large")

// catchUp brings c to the end of f: it checks and returns the lines other
// writers appended after c.off and, when truncate is set, cuts off a torn
// tail. Only a caller holding the exclusive lock may truncate: under it no
// write is in progress, so a fragment can only be what a dead writer left.
// It returns the new chain and the number of torn bytes found.
func (c chain) catchUp(f *os.File, truncate bool) ([]Event, chain, int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, c, 0, fmt.Errorf("sessionlog: %w", err)
	}
	size := fi.Size()
	switch {
	case size == c.off:
		return nil, c, 0, nil
	case size < c.off:
		return nil, c, 0, fmt.Errorf("%w: %s shrank from %d to %d bytes: something other than cordon truncated it",
			ErrCorrupt, f.Name(), c.off, size)
	}
	var evs []Event
	next, t, err := c.replay(io.NewSectionReader(f, c.off, size-c.off), false, func(e Event) { evs = append(evs, e) })
	if err != nil {
		return nil, c, 0, fmt.Errorf("%s: %w", f.Name(), err)
	}
	if t.size > 0 && truncate {
		if err := f.Truncate(next.off); err != nil {
			return nil, c, 0, fmt.Errorf("sessionlog: cutting off the torn line %d: %w", t.line, err)
		}
	}
	return evs, next, t.size, nil
}

// writeEvent appends one event of type typ with data (already encoded by
// encodeData) to f, which is open with O_APPEND, continuing chain c. Under
// the exclusive lock it catches up with other writers, then writes the line
// with a single write and, if sync is set, fsyncs it. It returns the event,
// the other writers' events it read, and the chain after all of them; the
// chain is returned even with an error, so that what was read is not read
// twice.
func writeEvent(f *os.File, c chain, typ string, data []byte, sync bool) (Event, []Event, chain, error) {
	if err := lockExclusive(f); err != nil {
		return Event{}, nil, c, fmt.Errorf("sessionlog: locking %s: %w", f.Name(), err)
	}
	defer unlock(f)

	others, c, _, err := c.catchUp(f, true)
	if err != nil {
		return Event{}, nil, c, err
	}
	switch {
	case c.seq == 0 && typ != EventSessionStart:
		return Event{}, others, c, fmt.Errorf("%w: %s has no %s line", ErrCorrupt, f.Name(), EventSessionStart)
	case c.seq > 0 && typ == EventSessionStart:
		return Event{}, others, c, fmt.Errorf("sessionlog: %s is written only by Create", EventSessionStart)
	}

	ev := Event{
		Seq:     c.seq + 1,
		Time:    time.Now().UTC(),
		Session: c.session,
		Type:    typ,
		Data:    data,
		Prev:    hex.EncodeToString(c.prev[:]),
	}
	line := encodeLine(ev, c.prev)
	if len(line)+1 > maxLineBytes {
		return Event{}, others, c, fmt.Errorf("%w: %s line of %d bytes, the limit is %d", ErrTooLarge, typ, len(line)+1, maxLineBytes)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		// Leave no fragment behind when we can; when we cannot, the next
		// writer's catch-up cuts it off.
		_ = f.Truncate(c.off)
		return Event{}, others, c, fmt.Errorf("sessionlog: appending to %s: %w", f.Name(), err)
	}
	c.accept(line, ev)
	if sync {
		if err := f.Sync(); err != nil {
			return ev, others, c, fmt.Errorf("sessionlog: %s line %d is written but may not be durable: %w", f.Name(), ev.Seq, err)
		}
	}
	return ev, others, c, nil
}

// AppendTo appends one event to the existing log of session id in dir from a
// process that does not serve the session: `cordon mode --session ID MODE`
// uses it to append a sandbox/mode event that the live server picks up before
// its next tool call. It reads and checks the whole log first, refusing to
// extend a broken chain, and always fsyncs before returning. It works whether
// or not the session is live (see IsLive); a missing session's error matches
// fs.ErrNotExist.
func AppendTo(dir, id, typ string, data any) (Event, error) {
	if err := ValidateSessionID(id); err != nil {
		return Event{}, fmt.Errorf("sessionlog: %w", err)
	}
	raw, err := encodeData(typ, data)
	if err != nil {
		return Event{}, err
	}
	f, err := openInDir(dir, logName(id), os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return Event{}, fmt.Errorf("sessionlog: session %s: %w", id, err)
	}
	defer f.Close()
	ev, _, _, err := writeEvent(f, newChain(id), typ, raw, true)
	if err == nil {
		// The server that created the log may not have synced its
		// directory entry yet (Create leaves it to the first durable event).
		err = syncDir(dir)
	}
	return ev, err
}
