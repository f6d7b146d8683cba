//go:build linux

package mcpserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkVsFilesystemServer measures cordon against the official
// filesystem MCP server (@modelcontextprotocol/server-filesystem, from
// test/interop's lock file), side by side in one run, both driven by the
// same minimal JSON-RPC client over stdio (a full SDK client adds some
// 0.3 ms of its own to every call of both, which hides the servers):
//
//   - ping (the round trip alone) and read/write/list: one call at a
//     time, p50 and p99 round trip;
//   - read-pipelined: 32 calls in flight, wall time and the server's own
//     CPU time per call (what a call costs the machine);
//   - startup-and-memory: start-up to the first initialize answer, and the
//     server's peak RSS over the whole run.
func BenchmarkVsFilesystemServer(b *testing.B) {
	fsServer := npmServer(b, "mcp-server-filesystem")
	w := newWorld(b)
	writeFourKiB(b, w)
	content := fourKiB
	for i := range 20 {
		os.WriteFile(filepath.Join(w.ws, fmt.Sprintf("entry-%02d.txt", i)), []byte("x\n"), 0o644)
	}
	servers := []struct {
		name      string
		cmd       func() *exec.Cmd
		read, lst string
		path      func(string) string
	}{
		{"cordon", func() *exec.Cmd {
			c := exec.Command(cordonBin, w.serveArgs("--log-level", "error")...)
			c.Env = w.env()
			return c
		}, "read_file", "list_directory", func(p string) string { return p }},
		{"server-filesystem", func() *exec.Cmd {
			return exec.Command(fsServer, w.ws)
		}, "read_text_file", "list_directory", func(p string) string { return filepath.Join(w.ws, p) }},
	}
	for _, srv := range servers {
		b.Run(srv.name, func(b *testing.B) {
			start := time.Now()
			c := startRaw(b, srv.cmd())
			startup := time.Since(start)
			readArgs := map[string]any{"path": srv.path("f.txt")}
			// The floor: a round trip the server does no work for.
			b.Run("ping", func(b *testing.B) {
				latencies(b, func() error { _, err := c.call("ping", map[string]any{}); return err })
			})
			b.Run("read", func(b *testing.B) {
				latencies(b, func() error { return c.tool(srv.read, readArgs) })
			})
			b.Run("write", func(b *testing.B) {
				writeArgs := map[string]any{"path": srv.path("out.txt"), "content": content}
				latencies(b, func() error { return c.tool("write_file", writeArgs) })
			})
			b.Run("list", func(b *testing.B) {
				listArgs := map[string]any{"path": srv.path(".")}
				latencies(b, func() error { return c.tool(srv.lst, listArgs) })
			})
			b.Run("read-pipelined", func(b *testing.B) { c.pipelined(b, srv.read, readArgs, 32) })
			// Go reports metrics of leaf benchmarks only.
			b.Run("startup-and-memory", func(b *testing.B) {
				for b.Loop() {
				}
				b.ReportMetric(float64(startup.Microseconds())/1000, "startup-ms")
				b.ReportMetric(float64(peakRSSKB(b, c.cmd.Process.Pid)), "peak-rss-kB")
			})
		})
	}
}

// rawClient speaks newline-delimited JSON-RPC to an MCP server over
// stdio, with nothing in between.
type rawClient struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startRaw(b testing.TB, cmd *exec.Cmd) *rawClient {
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	c := &rawClient{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if _, err := c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "bench", "version": "1"}}); err != nil {
		b.Fatal(err)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return c
}

func (c *rawClient) send(msg any) {
	data, _ := json.Marshal(msg)
	c.in.Write(append(data, '\n'))
}

func (c *rawClient) request(method string, params any) int {
	c.id++
	c.send(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	return c.id
}

// call sends one request and reads lines until its answer.
func (c *rawClient) call(method string, params any) ([]byte, error) {
	id := c.request(method, params)
	want := []byte(`"id":` + strconv.Itoa(id))
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		if i := bytes.Index(line, want); i >= 0 && i+len(want) < len(line) && (line[i+len(want)] == ',' || line[i+len(want)] == '}') {
			return line, nil
		}
	}
}

func (c *rawClient) tool(name string, args map[string]any) error {
	line, err := c.call("tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return err
	}
	if bytes.Contains(line, []byte(`"isError":true`)) || bytes.Contains(line, []byte(`"error":{`)) {
		return fmt.Errorf("%s failed: %.300s", name, line)
	}
	return nil
}

// pipelined keeps window calls in flight and reports wall and server CPU
// time per call.
func (c *rawClient) pipelined(b *testing.B, name string, args map[string]any, window int) {
	cpu0 := cpuTime(b, c.cmd.Process.Pid)
	b.ResetTimer()
	c.inFlight(b, b.N, name, args, window)
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/call")
	b.ReportMetric(float64((cpuTime(b, c.cmd.Process.Pid)-cpu0).Microseconds())/float64(b.N)/1000, "cpu-ms/call")
}

// inFlight makes n calls with window of them in flight at once, and fails
// on any that fails.
func (c *rawClient) inFlight(b *testing.B, n int, name string, args map[string]any, window int) {
	params := map[string]any{"name": name, "arguments": args}
	sent, got := 0, 0
	for ; sent < n && sent < window; sent++ {
		c.request("tools/call", params)
	}
	for got < n {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		if !bytes.Contains(line, []byte(`"result"`)) || bytes.Contains(line, []byte(`"isError":true`)) {
			b.Fatalf("%s failed: %.300s", name, line)
		}
		got++
		if sent < n {
			c.request("tools/call", params)
			sent++
		}
	}
}

// cpuTime is the user and system CPU time pid has used, all threads.
func cpuTime(b *testing.B, pid int) time.Duration {
	// Each thread's time on a CPU, in nanoseconds (schedstat): the ticks
	// of /proc/PID/stat are 10 ms, a tenth of what 500 small calls take.
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var total time.Duration
	for _, task := range tasks {
		data, err := os.ReadFile(task)
		if err != nil {
			continue // the thread ended
		}
		ns, err := strconv.ParseInt(strings.Fields(string(data))[0], 10, 64)
		if err != nil {
			b.Fatalf("%s: %q", task, data)
		}
		total += time.Duration(ns)
	}
	if len(tasks) > 0 {
		return total
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// BenchmarkWrapOverhead: the official filesystem server's read_text_file
// round trip, unwrapped and under `cordon wrap` on each backend, in one
// run: what the relay costs a tool call (the goal is within 5%).
func BenchmarkWrapOverhead(b *testing.B) {
	fsServer := npmServer(b, "mcp-server-filesystem")
	w := newWorld(b)
	writeFourKiB(b, w)
	f := filepath.Join(w.ws, "f.txt")
	readArgs := map[string]any{"path": f}
	for _, v := range []struct{ name, backend string }{{"unwrapped", ""}, {"wrap-bwrap", "bwrap"}, {"wrap-landlock", "landlock"}} {
		b.Run(v.name, func(b *testing.B) {
			cmd := exec.Command(fsServer, w.ws)
			if v.backend != "" {
				cmd = exec.Command(cordonBin, "wrap", "--backend", v.backend, "--state-dir", w.state, "--workspace", w.ws, "--", fsServer, w.ws)
			}
			cmd.Env, cmd.Dir = w.env(), w.ws
			c := startRaw(b, cmd)
			latencies(b, func() error { return c.tool("read_text_file", readArgs) })
		})
	}
}
