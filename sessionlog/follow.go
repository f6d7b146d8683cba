package sessionlog

import (
	"fmt"
	"os"
	"sync"
)

// Follower reads another session's log as it grows, without writing to it
// or locking it: a delegated session's server follows its parent's log to
// read the parent's mode at every call (SPEC §6). Each read costs one fstat
// when nothing was appended; what was appended is read once and checked
// against the chain, as Refresh does.
type Follower struct {
	mu     sync.Mutex
	f      *os.File
	c      chain
	start  StartInfo
	mode   string // the last sandbox/mode event's, "" if none
	broken error  // the first error: a follower that failed stays failed
}

// Follow opens the log of session id in dir for reading and reads it to its
// end. A missing session's error matches fs.ErrNotExist.
func Follow(dir, id string) (*Follower, error) {
	if err := ValidateSessionID(id); err != nil {
		return nil, fmt.Errorf("sessionlog: %w", err)
	}
	f, err := openInDir(dir, logName(id), os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("sessionlog: session %s: %w", id, err)
	}
	fl := &Follower{f: f, c: newChain(id)}
	if _, err := fl.Mode(); err != nil {
		f.Close()
		return nil, err
	}
	return fl, nil
}

// Start is the followed session's session/start data.
func (fl *Follower) Start() StartInfo {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.start
}

// Mode returns the followed session's effective mode now: its last
// sandbox/mode event, else the mode it started with. A log that cannot be
// read, or whose mode cannot be told, is an error, now and at every later
// call: the caller must fail closed, never fall back to an older reading.
func (fl *Follower) Mode() (string, error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.broken != nil {
		return "", fl.broken
	}
	evs, c, _, err := fl.c.catchUp(fl.f, false)
	if err != nil {
		fl.broken = err
		return "", err
	}
	fl.c = c
	for _, e := range evs {
		switch e.Type {
		case EventSessionStart:
			if err := e.Decode(&fl.start); err != nil {
				fl.broken = fmt.Errorf("sessionlog: session %s: its session/start: %w", fl.c.session, err)
				return "", fl.broken
			}
		case EventSandboxMode:
			md, err := e.ModeData()
			if err != nil {
				fl.broken = fmt.Errorf("sessionlog: session %s: a sandbox/mode event: %w", fl.c.session, err)
				return "", fl.broken
			}
			fl.mode = md.Mode
		}
	}
	switch {
	case fl.mode != "":
		return fl.mode, nil
	case fl.start.Mode != "":
		return fl.start.Mode, nil
	}
	return "", fmt.Errorf("sessionlog: session %s: its log names no mode yet", fl.c.session)
}

// Close closes the log.
func (fl *Follower) Close() error {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.f.Close()
}
