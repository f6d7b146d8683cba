//go:build unix

package sessionlog

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMultiProcessAppends: the serving process appends from several
// goroutines while child processes append with AppendTo, as `cordon mode`
// does. The chain stays valid, every event is there once, and Refresh
// (with what the server's own appends read along the way) hands the server
// every child event exactly once, in log order.
func TestMultiProcessAppends(t *testing.T) {
	dir, l := newSession(t, "multi")
	const children, perChild, goroutines, perGoroutine = 4, 40, 4, 40

	var (
		mu        sync.Mutex
		refreshed []Event
	)
	refresh := func() {
		evs, err := l.Refresh()
		assert.NoError(t, err)
		mu.Lock()
		refreshed = append(refreshed, evs...)
		mu.Unlock()
	}

	var procs []*os.Process
	var cmds sync.WaitGroup
	for c := range children {
		cmd := helper(t, "append", dir, "multi", "SL_N="+strconv.Itoa(perChild), "SL_WRITER=child"+strconv.Itoa(c))
		require.NoError(t, cmd.Start())
		procs = append(procs, cmd.Process)
		cmds.Go(func() { assert.NoError(t, cmd.Wait()) })
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				_, err := l.Append(EventToolCall, map[string]any{"writer": fmt.Sprintf("g%d", g), "i": i})
				assert.NoError(t, err)
				if i%4 == 0 {
					refresh()
				}
			}
		})
	}
	wg.Wait()
	cmds.Wait()
	refresh()
	require.NoError(t, l.Close())

	require.NoError(t, VerifyFile(l.Path()))
	evs, err := Read(dir, "multi")
	require.NoError(t, err)
	require.Len(t, evs, 1+children*perChild+goroutines*perGoroutine)

	count := map[string]int{}
	var fromChildren []Event
	for _, e := range evs[1:] {
		var d struct {
			Writer string
			I      int
		}
		require.NoError(t, e.Decode(&d))
		count[d.Writer]++
		if d.Writer[0] == 'c' {
			fromChildren = append(fromChildren, e)
		}
	}
	for c := range children {
		assert.Equal(t, perChild, count["child"+strconv.Itoa(c)])
	}
	for g := range goroutines {
		assert.Equal(t, perGoroutine, count["g"+strconv.Itoa(g)])
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, fromChildren, refreshed, "Refresh returns the other processes' events, once each, in order")
}

// TestKillMidWrite SIGKILLs a child process that is appending large events
// in a loop, so that the kill may land inside a write (the kernel stops a
// write to a regular file between pages on SIGKILL). Whatever it left,
// Open recovers: the kernel has dropped the child's locks, a torn line is
// cut off, appending continues and the log verifies.
func TestKillMidWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns and kills processes")
	}
	dir := t.TempDir()
	// Kills land inside a write only sometimes: keep going (within reason)
	// until one has, so the real torn-line path is usually exercised too.
	torn, rounds := 0, 0
	for round := 0; round < 20 && (round < 6 || torn == 0); round++ {
		rounds++
		// A fresh session each round keeps the replay after the kill short.
		id := fmt.Sprintf("killed-%d", round)
		l, err := Create(dir, id, StartInfo{Mode: "read-only"})
		require.NoError(t, err)
		require.NoError(t, l.Close())

		name := "serve"
		if round%2 == 1 {
			name = "rawserve"
		}
		cmd := helper(t, name, dir, id)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		line, err := bufio.NewReader(out).ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "ready\n", line)

		live, err := IsLive(dir, id)
		require.NoError(t, err)
		assert.True(t, live, "the child serves the session")
		time.Sleep(time.Duration(2+round) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()

		l, err = Open(dir, id)
		require.NoError(t, err, "round %d", round)
		if l.TornBytes() > 0 {
			torn++
		}
		ev, err := l.AppendSync(EventToolCall, map[string]int{"round": round})
		require.NoError(t, err)
		require.NoError(t, l.Close())
		require.NoError(t, VerifyFile(filepath.Join(dir, id+".jsonl")), "round %d", round)
		evs, err := Read(dir, id)
		require.NoError(t, err)
		assert.Equal(t, ev, evs[len(evs)-1])
	}
	t.Logf("%d of %d kills left a torn line", torn, rounds)
}
