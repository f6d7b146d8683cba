//go:build linux

package tools_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cordonhq/cordon/approval"
	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
	"github.com/cordonhq/cordon/tools"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNarrowingRacesBackgroundStarts: background starts back to back while
// the human narrows the session at random moments (`cordon mode`, which
// appends to the session's log from another process). Once a call has run
// after a narrowing, no process may run under a mode wider than the
// session's. Before one reading of the mode per call, a start whose policy
// was resolved before the narrowing and whose record was taken after it
// ran on in workspace-write under a read-only session, never ended.
func TestNarrowingRacesBackgroundStarts(t *testing.T) {
	const rounds, starts = 12, 6
	w := newFilesWorld(t, sandbox.WorkspaceWrite)
	sessions := filepath.Join(w.state, "sessions")
	id := sessionlog.NewSessionID()
	log, err := sessionlog.Create(sessions, id, sessionlog.StartInfo{Workspace: w.ws, Mode: string(sandbox.WorkspaceWrite), Transport: "stdio"})
	require.NoError(t, err)
	s := &tools.Session{ID: id, Log: log}
	t.Cleanup(func() { s.EndProcesses(); log.Close() })
	tb := tools.New(tools.Config{
		Settings: sandbox.Settings{Mode: sandbox.WorkspaceWrite, Workspace: w.ws, Home: w.home, StateDir: w.state, ConfigDir: w.config},
		Executor: &sandbox.Executor{Backends: &sandbox.Backends{}, Requirement: sandbox.Required},
		Gate:     approval.Gate{Policy: approval.OnRequest},
		Logger:   zerolog.Nop(),
		// The read-only ones live on to the end (the session's end kills
		// them); none is killed by the test while its sandbox may still be
		// setting up.
		ProcessesMax: rounds * starts,
	})
	call := tools.Call{Session: s}
	setMode := func(m sandbox.Mode) {
		_, err := sessionlog.AppendTo(sessions, id, sessionlog.EventSandboxMode, sessionlog.ModeData{Mode: string(m), Source: sessionlog.SourceUser})
		require.NoError(t, err)
	}

	for round := range rounds {
		setMode(sandbox.WorkspaceWrite)
		var wg sync.WaitGroup
		for range starts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// A refusal (narrowed before it started) is a right answer too.
				tb.Bash(context.Background(), call, tools.BashInput{Command: "echo up; exec sleep 20", Background: true, YieldMs: 1})
			}()
		}
		// The human's narrowing lands somewhere among the starts: random,
		// not a synchronisation.
		time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
		setMode(sandbox.ReadOnly)
		wg.Wait()

		res, terr := tb.ProcessListTool(context.Background(), call, tools.ProcessListInput{})
		require.Nil(t, terr)
		for _, p := range processList(t, res) {
			if p.Running {
				assert.Equal(t, sandbox.ReadOnly, p.Mode, "round %d: %s runs under %s in a read-only session:\n%s", round, p.ProcessID, p.Mode, res.Text)
			}
		}
		if t.Failed() {
			return
		}
	}
}

func processList(t *testing.T, res *tools.Result) []tools.ProcessInfo {
	t.Helper()
	b, err := json.Marshal(res.Structured)
	require.NoError(t, err)
	var out tools.ProcessListOutput
	require.NoError(t, json.Unmarshal(b, &out))
	return out.Processes
}
