package mcpserver

import (
	"context"
	"encoding/json"
	"sync"
)

// maxStdioWorkers bounds the requests a stdio connection serves at once;
// more wait their turn, in order. mcp-go's stdio transport served five
// tool calls at once. The reading of the connection never waits for a
// worker, so a handler waiting on the client (an elicitation, the
// client's roots) always gets its answer, and a cancellation always
// arrives.
const maxStdioWorkers = 8

// request is a request on its way to a worker.
type request struct {
	ctx  context.Context
	id   json.RawMessage
	line []byte
}

// workers serves requests on goroutines that stay for the connection: a
// fresh goroutine per request spent a sixth of a small read_file's CPU
// growing its stack to a handler's depth, and one per request in flight
// (32 of them) a megabyte of stacks.
type workers struct {
	serve func(request)

	mu      sync.Mutex
	wake    sync.Cond
	queue   []request
	running int // workers started
	idle    int // workers waiting for a request
	stopped bool
	busy    sync.WaitGroup // requests queued or being served
}

func newWorkers(serve func(request)) *workers {
	w := &workers{serve: serve}
	w.wake.L = &w.mu
	return w
}

// add queues r for a worker, starting one if none is idle and fewer than
// maxStdioWorkers run. It reports false once the workers have stopped.
func (w *workers) add(r request) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return false
	}
	w.busy.Add(1)
	w.queue = append(w.queue, r)
	switch {
	case w.idle > 0:
		w.idle-- // that worker is taken, whenever it wakes
		w.wake.Signal()
	case w.running < maxStdioWorkers:
		w.running++
		go w.work()
	}
	return true
}

func (w *workers) work() {
	w.mu.Lock()
	for {
		for len(w.queue) == 0 && !w.stopped {
			w.idle++
			w.wake.Wait()
		}
		if w.stopped {
			w.mu.Unlock()
			return
		}
		r := w.queue[0]
		w.queue[0] = request{} // let the collector have the line
		w.queue = w.queue[1:]
		w.mu.Unlock()
		w.serve(r)
		w.busy.Done()
		w.mu.Lock()
	}
}

// stop starts nothing more, drops what still waits (the connection is
// over: no one would read its answer), and waits for the requests being
// served, which end must have told to end.
func (w *workers) stop(end context.CancelFunc) {
	w.mu.Lock()
	w.stopped = true
	dropped := len(w.queue)
	w.queue = nil
	w.wake.Broadcast()
	w.mu.Unlock()
	for range dropped {
		w.busy.Done()
	}
	end()
	w.busy.Wait()
}
