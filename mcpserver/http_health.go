package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Health and drain. /healthz answers while the process serves; /readyz
// once the sandbox probe passed and until a drain begins. Neither needs
// the token: a load balancer or a kubelet probes them. On a drain (SIGTERM)
// /readyz turns 503 at once, a request that would open a new session gets
// 503 with Retry-After, and the calls in flight get up to the drain time
// to finish before every session ends.

// drainState counts the requests being answered and says whether a drain
// has begun.
type drainState struct {
	draining atomic.Bool
	mu       sync.Mutex
	busy     int
	idle     *sync.Cond
}

func newDrainState() *drainState {
	d := &drainState{}
	d.idle = sync.NewCond(&d.mu)
	return d
}

// retryAfter is what a client refused during a drain is told to wait: by
// then another replica serves.
const retryAfter = "5"

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

func (s *Server) readyz(d *drainState, probed func() (bool, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if d.draining.Load() {
			http.Error(w, "not ready: draining, cordon is shutting down", http.StatusServiceUnavailable)
			return
		}
		if probed != nil {
			if ok, why := probed(); !ok {
				http.Error(w, "not ready: "+why, http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprintln(w, "ready")
	}
}

// track counts the POSTs being answered (a GET stream lasts as long as
// its client likes, and is not a call), and during a drain refuses those
// that would open a session.
func (d *drainState) track(s *Server, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.draining.Load() && s.opensSession(r) {
			w.Header().Set("Retry-After", retryAfter)
			http.Error(w, "cordon is shutting down and opens no new session: retry, another replica may serve you", http.StatusServiceUnavailable)
			return
		}
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		d.mu.Lock()
		d.busy++
		d.mu.Unlock()
		defer func() {
			d.mu.Lock()
			d.busy--
			if d.busy == 0 {
				d.idle.Broadcast()
			}
			d.mu.Unlock()
		}()
		next.ServeHTTP(w, r)
	})
}

// opensSession says whether a request would start a session: a 2025
// initialize, or a 2026-07-28 request of a principal without a token
// session.
func (s *Server) opensSession(r *http.Request) bool {
	m := messageOf(r)
	if m == nil {
		return false
	}
	if m.Modern {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.tokens[principalOf(r.Context())] == nil
	}
	return m.Method == string(mcp.MethodInitialize)
}

// drain refuses new sessions from now on and waits, up to timeout, for
// the requests being answered.
func (d *drainState) drain(ctx context.Context, timeout time.Duration) (left int) {
	d.draining.Store(true)
	done := make(chan struct{})
	go func() {
		d.mu.Lock()
		for d.busy > 0 {
			d.idle.Wait()
		}
		d.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(timeout):
	case <-ctx.Done(): // SIGINT: no more waiting
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.busy
}
