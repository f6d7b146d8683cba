//go:build linux

package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sessionPidBound is how many tasks (threads included) a live session
// with one background process may hold below the server, per backend: its
// warm sandbox and the background process with its sandbox. A pod's pids
// limit divided by it is how many such sessions a pod holds. The goal is
// 5; docs/warm-sandbox.md ("Processes per session") says what is left
// above it and why. Measured on a loaded 2-core machine: 13–15 under bwrap
// and 18–21 under Landlock, as the helpers' idle runtime threads vary with
// the load (a Go helper's runtime starts a fourth now and then); before
// the reaper's thread diet 20–26 and 26–30, and before the zygote's and
// the warden's 27–29 and 39–45 (helperThreadBound).
var sessionPidBound = map[string]int{"bwrap": 20, "landlock": 27}

// helperThreadBound bounds the threads of the helpers that serve a
// sandbox, by an argument of theirs: the zygote and the warden took 8
// each when they listened for signals through os/signal and ran a P per
// core, and the reaper (--reap-fd) 7 when it did too and waited in wait4
// beside its control pipe's reader; 3–4 each now (the Landlock zygote
// 5–6).
var helperThreadBound = map[string]int{"--zygote-serve": 7, "--warden": 5, "--reap-fd": 5}

// treeProc is one process below the server.
type treeProc struct {
	pid, ppid, threads int
	rssKB, pssKB       int
	comm, args         string
}

// descendants lists every process below pid (not pid itself), with its
// thread count and memory.
func descendants(t testing.TB, pid int) []treeProc {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	byParent := map[int][]treeProc{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue // gone meanwhile
		}
		s := string(stat)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		f := strings.Fields(s[closing+1:])
		ppid, _ := strconv.Atoi(f[1])
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", p))
		args, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		tp := treeProc{pid: p, ppid: ppid, threads: len(tasks), comm: s[open+1 : closing],
			args: strings.Join(strings.Fields(strings.ReplaceAll(string(args), "\x00", " ")), " ")}
		rollup, _ := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", p))
		for _, line := range strings.Split(string(rollup), "\n") {
			if f := strings.Fields(line); len(f) > 1 {
				switch f[0] {
				case "Rss:":
					tp.rssKB, _ = strconv.Atoi(f[1])
				case "Pss:":
					tp.pssKB, _ = strconv.Atoi(f[1])
				}
			}
		}
		byParent[ppid] = append(byParent[ppid], tp)
	}
	var out []treeProc
	var walk func(int)
	walk = func(p int) {
		for _, c := range byParent[p] {
			out = append(out, c)
			walk(c.pid)
		}
	}
	walk(pid)
	return out
}

// sessionTasks counts the tasks of procs and describes each.
func sessionTasks(procs []treeProc) (int, string) {
	n := 0
	var b strings.Builder
	for _, p := range procs {
		n += p.threads
		args := p.args
		if len(args) > 90 {
			args = args[:90] + "…"
		}
		fmt.Fprintf(&b, "  pid %d (parent %d): %d tasks, RSS %d KiB, %s\n", p.pid, p.ppid, p.threads, p.rssKB, args)
	}
	return n, b.String()
}

// liveSessionWithBackground makes the session live as an agent's is: a
// foreground call (whose warm sandbox stays) and one background process.
// It returns the server's pid once the background command runs.
func liveSessionWithBackground(t testing.TB, w *world, cs *mcp.ClientSession) int {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash",
		Arguments: map[string]any{"command": "sleep 600", "background": true, "yield_ms": 1}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	pid := serverPID(t, w)
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, p := range descendants(t, pid) {
			if p.comm == "sleep" {
				return pid
			}
		}
		require.True(t, time.Now().Before(deadline), "the background sleep never ran")
		time.Sleep(50 * time.Millisecond)
	}
}

// settledTasks counts the session's tasks once two looks a while apart
// agree: a helper's runtime may still be starting a thread as the command
// starts.
func settledTasks(t testing.TB, pid int) (int, []treeProc) {
	t.Helper()
	n, _ := sessionTasks(descendants(t, pid))
	for range 20 {
		time.Sleep(100 * time.Millisecond)
		procs := descendants(t, pid)
		m, _ := sessionTasks(procs)
		if m == n {
			return m, procs
		}
		n = m
	}
	procs := descendants(t, pid)
	n, _ = sessionTasks(procs)
	return n, procs
}

// TestLiveSessionPids: a live session with one background process holds
// no more tasks (threads included) below the server than its bound, on
// both backends: each session spends a pod's pids limit.
func TestLiveSessionPids(t *testing.T) {
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t)
			cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--backend", backend)
			pid := liveSessionWithBackground(t, w, cs)
			n, procs := settledTasks(t, pid)
			_, desc := sessionTasks(procs)
			t.Logf("%s: %d tasks below the server:\n%s", backend, n, desc)
			require.LessOrEqual(t, n, sessionPidBound[backend], "tasks below the server:\n%s", desc)
			for _, p := range procs {
				for arg, bound := range helperThreadBound {
					if strings.Contains(" "+p.args+" ", " "+arg+" ") {
						assert.LessOrEqual(t, p.threads, bound, "threads of %s", p.args)
					}
				}
			}
		})
	}
}

// BenchmarkLiveSession reports what one live session with one background
// process holds below the server, per backend: tasks (threads included,
// what a pids limit counts), and the RSS and PSS of its processes. The
// numbers do not depend on b.N.
//
//	go test -run '^$' -bench '^BenchmarkLiveSession$' -benchtime 1x ./mcpserver/
func BenchmarkLiveSession(b *testing.B) {
	var rows []string
	for _, backend := range []string{"bwrap", "landlock"} {
		b.Run(backend, func(b *testing.B) {
			w := newWorld(b)
			cs := w.stdio(b, clientOpts{version: "2025-11-25"}, "--backend", backend)
			pid := liveSessionWithBackground(b, w, cs)
			for b.Loop() {
			}
			n, procs := settledTasks(b, pid)
			rss, pss := 0, 0
			for _, p := range procs {
				rss, pss = rss+p.rssKB, pss+p.pssKB
			}
			b.ReportMetric(float64(n), "pids/session")
			b.ReportMetric(float64(rss)/1024, "rss-MiB/session")
			b.ReportMetric(float64(pss)/1024, "pss-MiB/session")
			rows = append(rows, fmt.Sprintf("| live session with one background process, %s | %d | %d | %.1f MiB | %.1f MiB |",
				backend, len(procs), n, float64(rss)/1024, float64(pss)/1024))
		})
	}
	fmt.Println("| session | processes | pids (threads included) | RSS | PSS |")
	fmt.Println("| --- | --- | --- | --- | --- |")
	for _, r := range rows {
		fmt.Println(r)
	}
}

// TestWarmLandlockZygoteThreadsOutOfReach: under Landlock no thread of
// the warm sandbox's zygote is left in a command's domain once the
// command runs, through the helper cordon ships. A zygote that let the Go
// scheduler fork a command from its main thread (which Go never ends, but
// parks) left its thread group leader in that command's domain, and every
// later command could kill it. A signal to a thread id is judged by that
// thread's domain; several calls, since which thread forks is the
// scheduler's choice.
func TestWarmLandlockZygoteThreadsOutOfReach(t *testing.T) {
	w := newWorld(t)
	cs := w.stdio(t, clientOpts{version: "2025-11-25"}, "--backend", "landlock")
	for i := range 4 {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": `sleep 0.2; reachable=0
for task in /proc/$PPID/task/*; do kill -0 "${task##*/}" 2>/dev/null && reachable=$((reachable+1)); done
grep -q -- --zygote-serve /proc/$PPID/cmdline && echo "a warm call, reachable $reachable"`}})
		require.NoError(t, err)
		require.Equal(t, "a warm call, reachable 0", strings.TrimSpace(text(res)), "call %d", i)
	}
}
