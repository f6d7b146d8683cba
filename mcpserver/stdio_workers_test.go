package mcpserver

import (
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// script is a connection's requests, fed one by one to workers' next.
type script struct {
	t     *testing.T
	lines chan string // closed: the client ended the connection
	reads atomic.Int32
}

func newScript(t *testing.T) *script { return &script{t: t, lines: make(chan string, 64)} }

func (s *script) next() (request, error) {
	l, ok := <-s.lines
	if !ok {
		return request{}, io.EOF
	}
	s.reads.Add(1)
	method := string(mcp.MethodToolsCall)
	if l == "ping" {
		method = "ping"
	}
	return request{ctx: s.t.Context(), method: method, line: []byte(l)}, nil
}

// TestWorkersBoundedInOrder: at most maxStdioWorkers goroutines run, one
// of them reading whenever the others are busy; requests read meanwhile
// wait, and start in the order they came as workers free up. Stopping
// drops what still waits and waits for what runs.
func TestWorkersBoundedInOrder(t *testing.T) {
	release := make(chan struct{})
	var serving, most atomic.Int32
	var mu sync.Mutex
	var order []string
	s := newScript(t)
	w := startWorkers(s.next, func(r request) {
		n := serving.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		mu.Lock()
		order = append(order, string(r.line))
		mu.Unlock()
		if r.method == string(mcp.MethodToolsCall) {
			<-release
		}
		serving.Add(-1)
	})
	const total = maxStdioWorkers + 5
	for i := range total {
		s.lines <- strconv.Itoa(i)
	}
	// Seven serve; the eighth reads the rest and queues them.
	require.Eventually(t, func() bool { return serving.Load() == maxStdioWorkers-1 && s.reads.Load() == total }, 10*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond) // none beyond the bound starts meanwhile
	assert.EqualValues(t, maxStdioWorkers-1, serving.Load())

	// A ping is answered while every worker is busy, not queued.
	s.lines <- "ping"
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == maxStdioWorkers }, 10*time.Second, time.Millisecond)
	mu.Lock()
	assert.Equal(t, "ping", order[maxStdioWorkers-1])
	order = slices.Delete(order, maxStdioWorkers-1, maxStdioWorkers)
	mu.Unlock()

	for range 3 { // three finish: the next three start, in turn
		release <- struct{}{}
	}
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == maxStdioWorkers-1+3 }, 10*time.Second, time.Millisecond)
	mu.Lock()
	for i, got := range order[maxStdioWorkers-1:] {
		assert.Equal(t, strconv.Itoa(maxStdioWorkers-1+i), got, "queued requests start in order")
	}
	mu.Unlock()

	stopped := make(chan struct{})
	var ended atomic.Bool
	go func() {
		w.stop(func() { ended.Store(true); close(release) })
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("stop did not return")
	}
	assert.True(t, ended.Load())
	assert.EqualValues(t, 0, serving.Load(), "stop waited for what ran")
	assert.LessOrEqual(t, most.Load(), int32(maxStdioWorkers))
	mu.Lock()
	assert.Len(t, order, maxStdioWorkers-1+3, "the three still waiting were dropped")
	mu.Unlock()
	s.lines <- "late"
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	assert.NotContains(t, order, "late", "nothing is served after stop")
	mu.Unlock()
}

// TestWorkersTakeTurns: requests one after another are read and served by
// two goroutines taking turns, and the end of the reading is reported.
func TestWorkersTakeTurns(t *testing.T) {
	var served atomic.Int32
	done := make(chan struct{}, 1)
	s := newScript(t)
	w := startWorkers(s.next, func(request) { served.Add(1); done <- struct{}{} })
	for i := range 20 {
		s.lines <- strconv.Itoa(i)
		<-done
		// the one that served goes back to wait; the other reads
		require.Eventually(t, func() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.idle == w.running-1 }, 10*time.Second, time.Millisecond)
	}
	w.mu.Lock()
	assert.LessOrEqual(t, w.running, 2, "one reads while the other serves")
	w.mu.Unlock()
	close(s.lines)
	select {
	case err := <-w.ended:
		assert.ErrorIs(t, err, io.EOF)
	case <-time.After(10 * time.Second):
		t.Fatal("the end of the reading was not reported")
	}
	w.stop(func() {})
	assert.EqualValues(t, 20, served.Load())
}
