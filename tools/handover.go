package tools

import (
	"io"
	"sync"
	"time"

	"github.com/cordonhq/cordon/sandbox"
	"github.com/cordonhq/cordon/sessionlog"
)

// switchWriter is a foreground command's output: the call's buffer until
// the command is handed over to the background, then the process's own.
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *switchWriter) switchTo(w io.Writer) {
	s.mu.Lock()
	s.w = w
	s.mu.Unlock()
}

// handOver makes a foreground command that outran the default limit a
// background process of the session, so that a long build is not lost
// because the model did not think of timeout_ms: its output from now on
// goes to the process's buffer. It refuses (and the command is killed, as
// before) when the session may start no process, and then says why in
// *refusal.
func (tb *Toolbox) handOver(call Call, pol sandbox.ExecutionPolicy, command, cwd string, sessionMode sandbox.Mode, sink *switchWriter, refusal **ToolError) func(*sandbox.Process) (*bgProcess, bool) {
	return func(proc *sandbox.Process) (*bgProcess, bool) {
		conf := call.conf()
		ps := call.Session.procs()
		id, terr := ps.reserve(conf.ProcessesMax)
		if terr != nil {
			*refusal = terr
			return nil, false
		}
		out := NewStreamBuffer(conf.ProcessBufferChars)
		sink.switchTo(out)
		bp := &bgProcess{id: id, command: command, cwd: cwd, mode: pol.Mode, sessionMode: sessionMode,
			started: time.Now(), proc: proc, out: out, logged: make(chan struct{})}
		ps.mu.Lock()
		ps.byID[id] = bp
		ps.mu.Unlock()
		call.Session.record(conf.Logger, sessionlog.EventProcessStart, map[string]any{"process_id": id, "command": command, "mode": pol.Mode, "cwd": cwd, "from_foreground": true})
		go tb.watch(call, bp)
		go watchNarrowing(call, bp.mode, bp.sessionMode, proc.Done(), func() { bp.end(reasonModeNarrowed) })
		return bp, true
	}
}
