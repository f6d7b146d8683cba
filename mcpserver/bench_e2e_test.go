//go:build linux

package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Benchmarks of the real binary over real transports. They report p50 and
// p99 per call and the server's memory as extra metrics; run with
// go test -run '^$' -bench . ./mcpserver/

func benchWorld(b *testing.B) *world { return newWorld(b) }

func benchStdio(b *testing.B, w *world) *mcp.ClientSession {
	return w.stdio(b, clientOpts{version: "2025-11-25"})
}

func rssKBB(b *testing.B, w *world) int     { return rssKB(b, serverPID(b, w)) }
func peakRSSKBB(b *testing.B, w *world) int { return peakRSSKB(b, serverPID(b, w)) }

// latencies runs fn b.N times and reports p50/p99.
func latencies(b *testing.B, fn func() error) {
	ds := timings(b, fn)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, "p99-ms")
}

// timings runs fn b.N times and returns how long each took, sorted.
func timings(b *testing.B, fn func() error) []time.Duration {
	var ds []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := fn(); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return ds
}

func BenchmarkStdioReadFile(b *testing.B) {
	w := benchWorld(b)
	writeFourKiB(b, w)
	cs := benchStdio(b, w)
	latencies(b, func() error {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "f.txt"}})
		if err == nil && res.IsError {
			err = fmt.Errorf("read_file failed")
		}
		return err
	})
	b.ReportMetric(float64(peakRSSKBB(b, w)), "peak-rss-kB")
}

func BenchmarkStdioBashTrue(b *testing.B) {
	w := benchWorld(b)
	cs := benchStdio(b, w)
	latencies(b, func() error {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}})
		if err == nil && res.IsError {
			err = fmt.Errorf("bash failed")
		}
		return err
	})
}

func BenchmarkIdleRSS(b *testing.B) {
	w := benchWorld(b)
	cs := benchStdio(b, w)
	cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "sandbox_status"})
	for b.Loop() {
		time.Sleep(time.Millisecond)
	}
	b.ReportMetric(float64(rssKBB(b, w)), "idle-rss-kB")
}

// BenchmarkHTTPSessions runs 1, 8 and 64 concurrent sessions, each
// calling read_file in a loop, fails on any failed call, and reports calls
// per second and the server's peak memory.
func BenchmarkHTTPSessions(b *testing.B) {
	w := benchWorld(b)
	os.WriteFile(filepath.Join(w.ws, "f.txt"), []byte("hello\n"), 0o644)
	url, token, _ := w.httpServer(b)
	for _, n := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("sessions-%d", n), func(b *testing.B) {
			var sessions []*mcp.ClientSession
			for range n {
				cs, err := tryConnectHTTP(url, token, clientOpts{version: "2025-11-25"})
				if err != nil {
					b.Fatal(err)
				}
				defer cs.Close()
				sessions = append(sessions, cs)
			}
			var calls, failures int64
			var mu sync.Mutex
			start := time.Now()
			b.ResetTimer()
			var wg sync.WaitGroup
			for _, cs := range sessions {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < b.N; i++ {
						res, err := tryCall(cs, "read_file", map[string]any{"path": "f.txt"})
						mu.Lock()
						calls++
						if err != nil || res.IsError {
							failures++
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			if failures > 0 {
				b.Fatalf("%d of %d calls failed", failures, calls)
			}
			b.ReportMetric(float64(calls)/time.Since(start).Seconds(), "calls/s")
		})
	}
	b.ReportMetric(float64(peakRSSKBB(b, w)), "peak-rss-kB")
}
