//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a confined command leaves must not outlive cordon (SPEC §2): not
// when a session ends, not when cordon is killed (SIGKILL: no clean-up
// runs), whatever it was doing at that moment. Each test is judged by the
// host's process table afterwards: every command carries a unique token in
// its argv, and no process with it may be left.

// workload runs in one session until stop closes: background processes
// that try to outlive it (a new session, a double fork), foreground calls,
// and starts that are under way when cordon dies. It counts the
// background processes that started.
func workload(sess *httpSession, token string, stop <-chan struct{}, started *atomic.Int64) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		// A background process, with its own leavers.
		if res, _, err := sess.call("bash", map[string]any{"background": true, "yield_ms": 0,
			"command": fmt.Sprintf("setsid -f bash -c 'sleep 300; true %[1]s'; ( (bash -c 'sleep 301; true %[1]s' &) & ); exec bash -c 'sleep 302; true %[1]s'", token)}); err == nil && res["process_id"] != nil {
			started.Add(1)
		}
		// A foreground call (the warm sandbox), one that leaves a daemon.
		sess.call("bash", map[string]any{"command": fmt.Sprintf("setsid -f bash -c 'sleep 303; true %[1]s'; echo %[1]s", token)})
	}
}

// crashRounds is how many times each backend's server is killed: enough to
// catch a race around a start (CORDON_CRASH_ROUNDS overrides it).
func crashRounds(t *testing.T) int {
	if n, err := strconv.Atoi(os.Getenv("CORDON_CRASH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	if testing.Short() {
		return 2
	}
	return 10
}

// TestSIGKILLUnderLoadLeavesNoConfinedProcess: `cordon serve --http` with
// several sessions starting background processes and calls is killed
// with SIGKILL, again and again, on each backend; every confined process
// (those running, those being started, a warm sandbox's) dies with it.
func TestSIGKILLUnderLoadLeavesNoConfinedProcess(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			for round := 0; round < crashRounds(t); round++ {
				token := fmt.Sprintf("cordon-crash-%s-%d-%d", backend, round, time.Now().UnixNano())
				ws := killUnderLoad(t, backend, token, 8, 2)
				// Every sandbox names the workspace (a warm one's has no
				// token in its argv).
				left := append(awaitNone(token), awaitNone(ws)...)
				if !assert.Empty(t, left, "round %d: confined processes outlived cordon's SIGKILL:\n%s", round, describe(left)) {
					killLeft(left)
					return
				}
			}
		})
	}
}

// killUnderLoad starts a server on backend, runs workload in sessions
// sessions until at least perSession background processes each have
// started, and kills the server with SIGKILL while they go on. It returns
// the server's workspace.
func killUnderLoad(t *testing.T, backend, token string, sessions, perSession int) string {
	t.Helper()
	e := newCfgEnv(t)
	var args []string
	if backend != "" {
		args = []string{"--backend", backend}
	}
	srv := startHTTPServe(t, e, args...)
	stop := make(chan struct{})
	var started atomic.Int64
	var wg sync.WaitGroup
	for range sessions {
		sess, err := srv.open()
		require.NoError(t, err)
		wg.Add(1)
		go func() { defer wg.Done(); workload(sess, token, stop, &started) }()
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && started.Load() < int64(sessions*perSession) {
		time.Sleep(20 * time.Millisecond)
	}
	require.GreaterOrEqual(t, started.Load(), int64(sessions*perSession), "the sessions should have started their processes")
	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGKILL))
	close(stop)
	wg.Wait() // every call fails now: the server is gone
	return e.ws
}

// TestSessionEndLeavesNothingUnderTheServer: once an HTTP session ends,
// nothing of it is left under the server — its background processes and
// its warm sandboxes (bwrap, helper, zygote) included.
func TestSessionEndLeavesNothingUnderTheServer(t *testing.T) {
	e := newCfgEnv(t)
	srv := startHTTPServe(t, e, "--backend", "bwrap")
	token := fmt.Sprintf("cordon-session-end-%d", time.Now().UnixNano())
	sess, err := srv.open()
	require.NoError(t, err)
	_, text, err := sess.call("bash", map[string]any{"command": "echo " + token})
	require.NoError(t, err)
	require.Contains(t, text, token)
	_, _, err = sess.call("bash", map[string]any{"background": true, "command": "sleep 300; true " + token})
	require.NoError(t, err)
	require.NotEmpty(t, descendantsOf(srv.cmd.Process.Pid), "the session's sandboxes run under the server")
	require.NoError(t, sess.end())
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && len(descendantsOf(srv.cmd.Process.Pid)) > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	left := descendantsOf(srv.cmd.Process.Pid)
	assert.Empty(t, left, "processes of the ended session are left under the server:\n%s", describe(left))
}

// soakDuration is CORDON_SOAK (e.g. 30s, 1m): the soak runs only when set.
func soakDuration(t *testing.T) time.Duration {
	v := os.Getenv("CORDON_SOAK")
	if v == "" {
		t.Skip("CORDON_SOAK=DURATION runs the soak (make soak)")
	}
	d, err := time.ParseDuration(v)
	require.NoError(t, err, "CORDON_SOAK")
	return d
}

// TestSoak: N HTTP sessions (CORDON_SOAK_SESSIONS, 32 by default) make
// mixed calls for CORDON_SOAK, every result checked; then every session
// ends, and nothing of theirs is left (on the host or under the server),
// and the server's descriptors are back where they were. Then a SIGKILL
// under load leaves no confined process, and every session log still
// verifies.
func TestSoak(t *testing.T) {
	duration := soakDuration(t)
	n := 32
	if v, err := strconv.Atoi(os.Getenv("CORDON_SOAK_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	e := newCfgEnv(t)
	srv := startHTTPServe(t, e)
	pid := srv.cmd.Process.Pid
	token := fmt.Sprintf("cordon-soak-%d", time.Now().UnixNano())
	// The baseline: one session opened and ended, so that what the
	// server keeps for its life (the probe's, the listener's) is there.
	first, err := srv.open()
	require.NoError(t, err)
	_, _, err = first.call("bash", map[string]any{"command": "true"})
	require.NoError(t, err)
	require.NoError(t, first.end())
	baseline := settledFDs(pid, -1)

	var calls, failures atomic.Int64
	var failMu sync.Mutex
	var failed []string
	fail := func(format string, args ...any) {
		failures.Add(1)
		failMu.Lock()
		if len(failed) < 20 {
			failed = append(failed, fmt.Sprintf(format, args...))
		}
		failMu.Unlock()
	}
	end := time.Now().Add(duration)
	var wg sync.WaitGroup
	var latMu sync.Mutex
	var latencies []time.Duration
	for s := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess, err := srv.open()
			if err != nil {
				fail("session %d: open: %v", s, err)
				return
			}
			defer func() {
				if err := sess.end(); err != nil {
					fail("session %d: end: %v", s, err)
				}
			}()
			var mine []time.Duration
			for i := 0; time.Now().Before(end); i++ {
				calls.Add(1)
				start := time.Now()
				if err := soakStep(sess, token, s, i); err != nil {
					fail("session %d call %d: %v", s, i, err)
				}
				mine = append(mine, time.Since(start))
			}
			latMu.Lock()
			latencies = append(latencies, mine...)
			latMu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(latencies)
	at := func(q float64) time.Duration {
		if len(latencies) == 0 {
			return 0
		}
		return latencies[min(len(latencies)-1, int(q*float64(len(latencies))))]
	}
	t.Logf("soak: %d sessions, %d calls in %s, %d failed", n, calls.Load(), duration, failures.Load())
	// The row bench/table.sh prints (make bench).
	t.Logf("| %d HTTP sessions of mixed calls, %s (soak) | %.0f calls/s | p50 %.1f ms | p99 %.1f ms |", n, duration,
		float64(len(latencies))/duration.Seconds(), float64(at(0.50).Microseconds())/1000, float64(at(0.99).Microseconds())/1000)
	assert.Zero(t, failures.Load(), "failed calls:\n%s", strings.Join(failed, "\n"))

	left := awaitNone(token)
	assert.Empty(t, left, "processes of the ended sessions are left on the host:\n%s", describe(left))
	killLeft(left)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && len(descendantsOf(pid)) > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	under := descendantsOf(pid)
	assert.Empty(t, under, "processes are left under the server:\n%s", describe(under))
	assert.Equal(t, baseline, settledFDs(pid, baseline), "the server's descriptors are back where they were")

	// Then a SIGKILL under load.
	crashToken := token + "-crash"
	ws := killUnderLoad(t, "", crashToken, 8, 2)
	left = append(awaitNone(crashToken), awaitNone(ws)...)
	assert.Empty(t, left, "confined processes outlived cordon's SIGKILL:\n%s", describe(left))
	killLeft(left)
	verifyLogs(t, e.state)
	verifyLogs(t, filepath.Join(filepath.Dir(ws), "state"))
}

// soakStep is one mixed call, its result checked.
func soakStep(sess *httpSession, token string, s, i int) error {
	mark := fmt.Sprintf("%s-%d-%d", token, s, i)
	switch i % 5 {
	case 0:
		_, text, err := sess.call("bash", map[string]any{"command": "echo " + mark})
		if err == nil && !strings.Contains(text, mark) {
			err = fmt.Errorf("bash: %q lacks %q", text, mark)
		}
		return err
	case 1:
		path := fmt.Sprintf("soak-%d.txt", s)
		if _, _, err := sess.call("write_file", map[string]any{"path": path, "content": mark + "\n"}); err != nil {
			return err
		}
		_, text, err := sess.call("read_file", map[string]any{"path": path})
		if err == nil && !strings.Contains(text, mark) {
			err = fmt.Errorf("read_file: %q lacks %q", text, mark)
		}
		return err
	case 2:
		// A background process that ends by itself, and its output.
		res, _, err := sess.call("bash", map[string]any{"background": true, "yield_ms": 0, "command": "echo " + mark + "; sleep 0.2"})
		if err != nil {
			return err
		}
		var got strings.Builder
		got.WriteString(fmt.Sprint(res["output"]))
		id := fmt.Sprint(res["process_id"])
		if res["process_id"] == nil {
			return nil // it finished within the call
		}
		for range 20 {
			out, _, err := sess.call("process_output", map[string]any{"process_id": id, "wait_ms": 2000})
			if err != nil {
				return err
			}
			got.WriteString(fmt.Sprint(out["output"]))
			if running, _ := out["running"].(bool); !running {
				break
			}
		}
		if !strings.Contains(got.String(), mark) {
			return fmt.Errorf("process_output: %q lacks %q", got.String(), mark)
		}
		return nil
	case 3:
		// A background process that is killed, and one left to the
		// session's end.
		res, _, err := sess.call("bash", map[string]any{"background": true, "yield_ms": 0, "command": "setsid -f bash -c 'sleep 300; true " + token + "'; sleep 300; true " + token})
		if err != nil {
			return err
		}
		if i%2 == 1 {
			_, _, err = sess.call("process_kill", map[string]any{"process_id": fmt.Sprint(res["process_id"]), "signal": "KILL"})
		}
		return err
	default:
		_, text, err := sess.call("bash", map[string]any{"command": "setsid -f bash -c 'sleep 300; true " + token + "'; echo " + mark})
		if err == nil && !strings.Contains(text, mark) {
			err = fmt.Errorf("bash with a leaver: %q lacks %q", text, mark)
		}
		return err
	}
}

// settledFDs counts the server's descriptors once they stop changing (a
// connection closing, a pipe's reader ending): at want, or after a
// generous wait.
func settledFDs(pid, want int) int {
	deadline := time.Now().Add(20 * time.Second)
	last := openFDs(pid)
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		now := openFDs(pid)
		if now == want || want < 0 && now == last {
			return now
		}
		last = now
	}
	return last
}

// verifyLogs runs `cordon log ID --verify` on every session log in state.
func verifyLogs(t *testing.T, state string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(state, "sessions"))
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok {
			continue
		}
		n++
		r := cordon(t, nil, "", "log", id, "--verify", "--state-dir", state)
		assert.Equal(t, 0, r.code, "cordon log %s --verify: %s%s", id, r.stdout, r.stderr)
	}
	assert.NotZero(t, n, "session logs in %s", state)
}
