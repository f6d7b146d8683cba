package tools

import (
	"context"
	"errors"
	"sync"

	"github.com/cordonhq/cordon/sandbox"
)

// A foreground bash call runs under the mode in force when it started, as
// a background process does; a narrowing of the session's mode ends it
// the same way, before the next call of the session runs (SPEC §5), rather
// than let it write on for up to its ten-minute timeout.

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

// endNarrowed cancels the runs started under a mode wider than current,
// the session's mode now, when the session itself has narrowed below it.
func (fr *foregroundRuns) endNarrowed(current sandbox.Mode) {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	for r := range fr.runs {
		if r.mode.WiderThan(current) && r.sessionMode.WiderThan(current) {
			r.cancel(errModeNarrowed)
		}
	}
}
