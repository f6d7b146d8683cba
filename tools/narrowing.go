package tools

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cordonhq/cordon/sandbox"
)

// A command runs under the mode in force when it started, foreground or
// background. When the human narrows the session's mode (cordon mode), a
// command started under a wider mode ends: before the next call of the
// session runs (SPEC §5), and, should no call come, within
// narrowingCheckEvery — a model that stops calling does not keep the
// access the human took back.

// narrowingCheckEvery is how often a running command looks at its
// session's mode: one fstat of the session log.
const narrowingCheckEvery = 500 * time.Millisecond

// narrowedBelow reports whether the session's mode now is narrower than
// both the mode a command runs under and the session's own when it
// started (an escalation for one call, wider than the session's mode,
// does not end because the session is where it was).
func narrowedBelow(now, mode, sessionMode sandbox.Mode) bool {
	return mode.WiderThan(now) && sessionMode.WiderThan(now)
}

// modeNow is one reading of a session's mode: the session's (never wider
// than its parent's) and, for a delegated session, its parent's.
type modeNow struct {
	session sandbox.Mode
	ceiling sandbox.Mode // "" unless delegated
}

// ends reports whether a command running under mode, started when the
// session's mode was sessionModeAtStart, must end now: the session
// narrowed below it, or, in a delegated session, the parent is narrower
// than it (an escalation for one call included: the sub-agent can never
// be wider than its parent now).
func (n modeNow) ends(mode, sessionModeAtStart sandbox.Mode) bool {
	return narrowedBelow(n.session, mode, sessionModeAtStart) || (n.ceiling != "" && mode.WiderThan(n.ceiling))
}

// readMode is the session's mode now, for the narrowing check.
func readMode(call Call) modeNow {
	return call.Session.modeNow(call.conf().Settings.Mode)
}

// endedByNarrowing reports whether a command that runs under mode, for
// this call, must end (or not start) because the session's mode, or its
// parent's, narrowed since the call read it.
func endedByNarrowing(call Call, mode sandbox.Mode) bool {
	return readMode(call).ends(mode, call.sessionMode())
}

// watchNarrowing calls end once the session's mode narrows below the
// command's, unless done closes first.
func watchNarrowing(call Call, mode, sessionModeAtStart sandbox.Mode, done <-chan struct{}, end func()) {
	t := time.NewTicker(narrowingCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			if readMode(call).ends(mode, sessionModeAtStart) {
				end()
				return
			}
		}
	}
}

// errModeNarrowed is the cause a narrowed foreground call is cancelled
// with.
var errModeNarrowed = errors.New("the session's mode narrowed below the one the command started under")

// foregroundRun is a foreground command in flight.
type foregroundRun struct {
	mode        sandbox.Mode // the policy's, an escalation's included
	sessionMode sandbox.Mode // the session's own when it started
	cancel      context.CancelCauseFunc
}

// foregroundRuns are a session's foreground commands in flight.
type foregroundRuns struct {
	mu   sync.Mutex
	runs map[*foregroundRun]struct{}
}

// add registers r until the returned func is called.
func (fr *foregroundRuns) add(r *foregroundRun) (done func()) {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if fr.runs == nil {
		fr.runs = map[*foregroundRun]struct{}{}
	}
	fr.runs[r] = struct{}{}
	return func() {
		fr.mu.Lock()
		defer fr.mu.Unlock()
		delete(fr.runs, r)
	}
}

// endNarrowed cancels the runs that the session's mode now ends.
func (fr *foregroundRuns) endNarrowed(now modeNow) {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	for r := range fr.runs {
		if now.ends(r.mode, r.sessionMode) {
			r.cancel(errModeNarrowed)
		}
	}
}
