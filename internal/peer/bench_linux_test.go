//go:build linux

package peer

import (
	"net/netip"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// BenchmarkCheck is the cost of one check, which cordon pays once per
// accepted connection:
//
//	no-sandbox                    nothing is confined: /proc is listed and every argv read
//	sandbox/client-inside         a sandboxed client, refused
//	sandbox/client-outside/next   one sandbox runs, the client is outside it and was
//	                              found before (a client's next connection)
//	sandbox/client-outside/first  the same, found for the first time: the search
//	                              runs from the newest process down
//	sandbox/client-outside/old    the same, for a client older than every other process
//	                              (the search's worst case: every descriptor is read)
//
// procs=machine runs them on the machine as it is, procs=machine+500 with
// 500 more idle processes; the process count is reported as procs.
//
//	go test -run '^$' -bench Check -benchtime 2s ./internal/peer
func BenchmarkCheck(b *testing.B) {
	b.Run("procs=machine", func(b *testing.B) { benchCheck(b, 0) })
	b.Run("procs=machine+500", func(b *testing.B) { benchCheck(b, 500) })
}

func benchCheck(b *testing.B, extra int) {
	// The old client connects before the idle processes start, once for
	// every -count.
	oldLn := listen(b, "127.0.0.1:0")
	start(b, connectArgv(b, oldLn.Addr().String())...)
	oldServer, oldClient := accepted(b, oldLn)
	for range extra {
		cmd := exec.Command("/bin/sleep", "3600")
		require.NoError(b, cmd.Start())
		b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	newChecker := func(mark string) *Checker {
		// The real checker also looks for cordon's executable: any file
		// will do to pay for that look.
		c, err := New(Options{HelperArg: mark, SelfExe: "/bin/true"})
		require.NoError(b, err)
		return c
	}
	run := func(b *testing.B, c *Checker, server, client netip.AddrPort, inside, forget bool) {
		v := c.Check(server, client)
		require.Equal(b, inside, v.Refused, v.Reason)
		procs := countProcs(b)
		cpu0 := cpuTime()
		n := 0
		b.ResetTimer()
		for b.Loop() {
			if forget {
				c.mu.Lock()
				c.recent = nil
				c.mu.Unlock()
			}
			c.Check(server, client)
			n++
		}
		b.ReportMetric(float64(procs), "procs")
		// The machine is shared: CPU time is steadier than the wall clock.
		b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n), "cpu-ns/op")
	}
	newClient := func(b *testing.B, argv func(addr string) []string) (server, client netip.AddrPort) {
		ln := listen(b, "127.0.0.1:0")
		start(b, argv(ln.Addr().String())...)
		return accepted(b, ln)
	}
	outside := func(addr string) []string { return connectArgv(b, addr) }
	b.Run("no-sandbox", func(b *testing.B) {
		server, client := newClient(b, outside)
		run(b, newChecker(marker(b)), server, client, false, false)
	})
	b.Run("sandbox/client-inside", func(b *testing.B) {
		mark := marker(b)
		server, client := newClient(b, func(addr string) []string {
			return append([]string{self(b), "peer-test-root", mark, "--"}, connectArgv(b, addr)...)
		})
		run(b, newChecker(mark), server, client, true, false)
	})
	for _, c := range []struct {
		name        string
		old, forget bool
	}{{"next", false, false}, {"first", false, true}, {"old", true, true}} {
		b.Run("sandbox/client-outside/"+c.name, func(b *testing.B) {
			mark := marker(b)
			idleSandbox(b, mark)
			server, client := oldServer, oldClient
			if !c.old {
				server, client = newClient(b, outside)
			}
			run(b, newChecker(mark), server, client, false, c.forget)
		})
	}
}

// cpuTime is this process's user and system time so far.
func cpuTime() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func countProcs(b testing.TB) int {
	ents, err := os.ReadDir("/proc")
	require.NoError(b, err)
	n := 0
	for _, e := range ents {
		if _, ok := atoi([]byte(e.Name())); ok {
			n++
		}
	}
	return n
}
