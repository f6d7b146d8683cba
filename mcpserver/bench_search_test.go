//go:build linux

package mcpserver_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// searchCase is one search of the table, as cordon's tool call and as the
// ripgrep command an agent's own Grep or Glob would run (a process per
// search, as Claude Code runs it).
type searchCase struct {
	name, what, floor string
	tool              string
	args              map[string]any
	rg                []string
}

// goSrcCases are the three searches of the table over the Go
// distribution's src: a tree nobody here wrote, with its mix of sizes,
// nested .gitignore files and deep directories, on every machine that
// builds cordon.
func goSrcCases(src string) []searchCase {
	const regex = `func \(\w+ \*\w+\) Close\(`
	return []searchCase{
		{name: "grep-regex", what: "`grep` regex `" + regex + "`, output count, Go `src` (MCP, Go SDK client)",
			floor: "`rg -c`, a process per search", tool: "grep",
			args: map[string]any{"pattern": regex, "path": src, "output": "count", "max_results": 10000},
			rg:   []string{"-c", regex, src}},
		{name: "grep-literal", what: "`grep` literal `TODO(`, output count, same tree", floor: "`rg -c -F`", tool: "grep",
			args: map[string]any{"pattern": "TODO(", "literal": true, "path": src, "output": "count", "max_results": 10000},
			rg:   []string{"-c", "-F", "TODO(", src}},
		{name: "glob", what: "`glob` `**/*_test.go`, same tree", floor: "`rg --files -g '*_test.go'`", tool: "glob",
			args: map[string]any{"pattern": "**/*_test.go", "path": src},
			rg:   []string{"--files", "-g", "*_test.go", src}},
	}
}

// goSrc is the Go distribution's src directory.
func goSrc(b *testing.B) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "src")
}

// searchRows measures the search rows of the README's table with side
// (cordon's call alternating with ripgrep's), through a real MCP client:
// the official Go SDK's, over stdio, as an agent's client would call. Each
// wall-time row has a CPU row under it: the server's CPU time per search
// against ripgrep's (user and system, all its threads), which a busy
// machine skews less than wall time.
func searchRows(b *testing.B, w *world, side func(name string, cordon, floor func() error), p50 map[string]time.Duration) []tableRow {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Log("ripgrep is not installed: no search rows")
		return nil
	}
	server := exec.Command(cordonBin, w.serveArgs("--log-level", "error")...)
	server.Env = w.env()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := newClient(clientOpts{}).Connect(ctx, &mcp.CommandTransport{Command: server}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	var rows []tableRow
	for _, c := range goSrcCases(goSrc(b)) {
		var calls, rgCalls int
		var rgCPU time.Duration
		call := func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			if err != nil {
				return err
			}
			if res.IsError {
				return fmt.Errorf("%s failed: %v", c.tool, res.Content)
			}
			calls++
			return nil
		}
		ripgrep := func() error {
			cmd := exec.Command(rg, c.rg...)
			out, err := cmd.Output()
			if err != nil || len(out) == 0 {
				return fmt.Errorf("rg %q: %v (%d bytes of output)", c.rg, err, len(out))
			}
			rgCalls++
			rgCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			return nil
		}
		// One of each first: the page cache holds the tree for both.
		if err := call(); err != nil {
			b.Fatal(err)
		}
		if err := ripgrep(); err != nil {
			b.Fatal(err)
		}
		calls, rgCalls, rgCPU = 0, 0, 0
		cpu0 := cpuTime(b, server.Process.Pid)
		side(c.name, call, ripgrep)
		cpu := cpuTime(b, server.Process.Pid) - cpu0
		rows = append(rows, ratioRow(c.what, c.floor, p50[c.name], p50[c.name+"-floor"], 1.0))
		if calls > 0 && rgCalls > 0 {
			rows = append(rows, ratioRow("same, server CPU per search", "ripgrep's CPU (user and system)",
				cpu/time.Duration(calls), rgCPU/time.Duration(rgCalls), 0))
		}
	}
	return rows
}

// BenchmarkSearch is the search rows of BenchmarkTable alone:
//
//	go test -run '^$' -bench '^BenchmarkSearch$' -benchtime 20x ./mcpserver/
func BenchmarkSearch(b *testing.B) {
	w := newWorld(b)
	p50 := map[string]time.Duration{}
	side := func(name string, cordon, floor func() error) {
		b.Run(name, func(b *testing.B) {
			var ours, theirs []time.Duration
			timed := func(fn func() error, into *[]time.Duration) {
				start := time.Now()
				if err := fn(); err != nil {
					b.Fatal(err)
				}
				*into = append(*into, time.Since(start))
			}
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					timed(cordon, &ours)
					timed(floor, &theirs)
				} else {
					timed(floor, &theirs)
					timed(cordon, &ours)
				}
			}
			p50[name], p50[name+"-floor"] = median(ours), median(theirs)
			b.ReportMetric(float64(p50[name].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(p50[name+"-floor"].Microseconds())/1000, "floor-p50-ms")
		})
	}
	printTable(searchRows(b, w, side, p50))
}
