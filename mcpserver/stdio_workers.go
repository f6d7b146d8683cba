package mcpserver

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// maxStdioWorkers bounds the goroutines of a stdio connection: one reads
// while the others serve requests; past the bound, tool calls wait their
// turn, in order (other requests are quick, and answered at once). mcp-go's stdio transport served five tool calls at once.
// The reading never waits for a worker, so a handler waiting on the client
// (an elicitation, the client's roots) always gets its answer, and a
// cancellation always arrives.
const maxStdioWorkers = 8

// request is a request on its way to being served.
type request struct {
	ctx    context.Context
	id     json.RawMessage
	method string
	line   []byte
}

// workers serve a connection with goroutines that take turns reading it
// (leader and followers): the one that reads a request hands the reading
// on to another, idle or new, and serves the request itself. Nothing on
// the way from the client's line to its answer waits for another
// goroutine to wake, which took a fifth off a small read_file's latency
// from idle. The goroutines stay for the connection: one per request spent
// a sixth of the CPU growing its stack to a handler's depth.
type workers struct {
	// next reads up to the next request, handling whatever comes before
	// it; an error ends the reading (io.EOF: the client closed it).
	next  func() (request, error)
	serve func(request)
	ended chan error // the reading's end, sent once

	mu      sync.Mutex
	wake    sync.Cond
	queue   []request // read while every worker was busy
	running int       // goroutines started
	idle    int       // goroutines waiting for work or the reading
	reading bool      // a goroutine holds the reading
	done    bool      // the reading ended
	stopped bool
	busy    sync.WaitGroup // requests queued or being served
}

// startWorkers starts the first worker, which reads first.
func startWorkers(next func() (request, error), serve func(request)) *workers {
	w := &workers{next: next, serve: serve, ended: make(chan error, 1), running: 1}
	w.wake.L = &w.mu
	go w.work()
	return w
}

func (w *workers) work() {
	w.mu.Lock()
	for {
		switch {
		case w.stopped:
			w.running--
			w.mu.Unlock()
			return
		case len(w.queue) > 0:
			r := w.queue[0]
			w.queue[0] = request{} // let the collector have the line
			w.queue = w.queue[1:]
			w.mu.Unlock()
			w.serve(r)
			w.busy.Done()
			w.mu.Lock()
		case !w.reading && !w.done:
			w.reading = true
			w.mu.Unlock()
			w.lead() // returns with mu held and the reading given up
		default:
			w.idle++
			w.wake.Wait()
			w.idle--
		}
	}
}

// lead reads until it has a request that another goroutine can take the
// reading from, then serves it. It returns with mu held.
func (w *workers) lead() {
	for {
		r, err := w.next()
		w.mu.Lock()
		if err != nil {
			w.reading, w.done = false, true
			w.ended <- err
			return
		}
		if w.stopped {
			w.reading = false
			return // the connection is over: no one would read the answer
		}
		w.busy.Add(1)
		switch {
		case w.idle > 0:
			w.wake.Signal() // it finds the reading free
		case w.running < maxStdioWorkers:
			w.running++
			go w.work()
		case r.method != string(mcp.MethodToolsCall):
			// Every other worker is busy with a tool: a ping or a listing
			// is answered at once all the same (a client may take a ping
			// unanswered for a dead server), on a goroutine of its own.
			w.mu.Unlock()
			go func() {
				defer w.busy.Done()
				w.serve(r)
			}()
			continue
		default:
			// Every other worker is busy: the call waits its turn, and
			// this goroutine reads on.
			w.queue = append(w.queue, r)
			w.mu.Unlock()
			continue
		}
		w.reading = false
		w.mu.Unlock()
		w.serve(r)
		w.busy.Done()
		w.mu.Lock()
		return
	}
}

// stop starts nothing more, drops what still waits (the connection is
// over: no one would read its answer), and waits for the requests being
// served, which end must have told to end. A worker blocked in reading
// stays so until the client's side closes, and then serves nothing.
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
