package mcpserver

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkersBoundedInOrder: at most maxStdioWorkers requests are served
// at once; the rest wait, and start in the order they came as workers
// free up. Stopping drops what still waits and waits for what runs.
func TestWorkersBoundedInOrder(t *testing.T) {
	release := make(chan struct{})
	var running, most atomic.Int32
	var mu sync.Mutex
	var order []string
	w := newWorkers(func(r request) {
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		mu.Lock()
		order = append(order, string(r.line))
		mu.Unlock()
		<-release
		running.Add(-1)
	})
	ctx := t.Context()
	const total = maxStdioWorkers + 5
	for i := range total {
		require.True(t, w.add(request{ctx: ctx, line: []byte(strconv.Itoa(i))}))
	}
	waitFor(t, func() bool { return running.Load() == maxStdioWorkers })
	time.Sleep(50 * time.Millisecond) // none beyond the bound starts meanwhile
	assert.EqualValues(t, maxStdioWorkers, running.Load())

	for range 3 { // three finish: the next three start, in turn
		release <- struct{}{}
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == maxStdioWorkers+3 })
	mu.Lock()
	for i, got := range order[maxStdioWorkers:] {
		assert.Equal(t, strconv.Itoa(maxStdioWorkers+i), got, "queued requests start in order")
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
	assert.EqualValues(t, 0, running.Load(), "stop waited for what ran")
	assert.LessOrEqual(t, most.Load(), int32(maxStdioWorkers))
	mu.Lock()
	assert.Len(t, order, maxStdioWorkers+3, "the two still waiting were dropped")
	mu.Unlock()
	assert.False(t, w.add(request{ctx: ctx}), "nothing starts after stop")
}

// TestWorkersReused: requests one after another are served by one worker.
func TestWorkersReused(t *testing.T) {
	var served atomic.Int32
	done := make(chan struct{}, 1)
	w := newWorkers(func(request) { served.Add(1); done <- struct{}{} })
	for range 20 {
		require.True(t, w.add(request{ctx: t.Context()}))
		<-done
		waitFor(t, func() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.idle == w.running })
	}
	w.mu.Lock()
	assert.Equal(t, 1, w.running, "one worker served them all")
	w.mu.Unlock()
	w.stop(func() {})
	assert.EqualValues(t, 20, served.Load())
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}
