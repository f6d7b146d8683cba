//go:build linux

package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cpuMs is a process's user and system CPU time so far, in milliseconds.
func cpuMs(b *testing.B, pid int) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return float64(utime+stime) * 10 // USER_HZ is 100
}

func startBG(b *testing.B, cs *mcp.ClientSession, command string) string {
	b.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash",
		Arguments: map[string]any{"command": command, "background": true, "yield_ms": 1}})
	if err != nil || res.IsError {
		b.Fatalf("starting %q: %v %v", command, err, res)
	}
	return res.StructuredContent.(map[string]any)["process_id"].(string)
}

// BenchmarkProcessOutputWait: a call waiting in process_output for a
// process that writes nothing costs the server (nearly) no CPU: it sleeps
// on an event. Each op is one 500 ms wait; server-cpu-ms is per wait.
func BenchmarkProcessOutputWait(b *testing.B) {
	w := benchWorld(b)
	cs := benchStdio(b, w)
	id := startBG(b, cs, "sleep 3600")
	pid := serverPID(b, w)
	before := cpuMs(b, pid)
	n := 0
	for b.Loop() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "process_output",
			Arguments: map[string]any{"process_id": id, "wait_ms": 500}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
		n++
	}
	b.ReportMetric((cpuMs(b, pid)-before)/float64(n), "server-cpu-ms/wait")
}

// BenchmarkReadFileBeside16Producers: read_file latency with 16
// background processes of the session writing a line every 10 ms each,
// against the same session without them (read_file-alone), in one run.
func BenchmarkReadFileBeside16Producers(b *testing.B) {
	for _, producers := range []int{0, 16} {
		b.Run(fmt.Sprintf("producers=%d", producers), func(b *testing.B) {
			w := benchWorld(b)
			writeFourKiB(b, w)
			cs := benchStdio(b, w)
			for range producers {
				startBG(b, cs, "while :; do echo tick; sleep 0.01; done")
			}
			latencies(b, func() error {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "f.txt"}})
				if err == nil && res.IsError {
					err = fmt.Errorf("read_file failed")
				}
				return err
			})
		})
	}
}
