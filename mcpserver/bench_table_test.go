//go:build linux

package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkTable measures every row of the README's performance table
// with its floor or peer, side by side in one run, and prints the table
// (bench/table.sh keeps the table lines). Each row is a ratio, since
// absolutes depend on the machine; the goal column is the target.
//
//	go test -run '^$' -bench '^BenchmarkTable$' -benchtime 200x ./mcpserver/
func BenchmarkTable(b *testing.B) {
	fsServer := npmServer(b, "mcp-server-filesystem")
	w := newWorld(b)
	writeFourKiB(b, w)
	serve := func(backend string) *exec.Cmd {
		c := exec.Command(cordonBin, w.serveArgs("--log-level", "error", "--backend", backend)...)
		c.Env, c.Dir = w.env(), w.ws
		return c
	}
	bareBwrap := bareBwrapArgv(b, w)
	truePath, _ := exec.LookPath("true")
	bashTrue := []string{"bash", "-c", "true"}
	helperBin := filepath.Join(filepath.Dir(cordonBin), "cordon-helper")

	var rows []tableRow
	p50 := map[string]time.Duration{}
	measure := func(name string, fn func() error) {
		b.Run(name, func(b *testing.B) { p50[name] = p50Of(b, fn) })
	}
	run := func(argv ...string) func() error {
		return func() error {
			out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("%s: %v: %s", argv[0], err, out)
			}
			return nil
		}
	}

	// bash `true` over stdio, against the same command without cordon.
	for _, backend := range []string{"bwrap", "landlock"} {
		c := startRaw(b, serve(backend))
		measure("bash-"+backend, func() error { return c.tool("bash", map[string]any{"command": "true"}) })
	}
	measure("bare-bwrap-bash", run(append(slices.Clone(bareBwrap), bashTrue...)...))
	measure("plain-bash", run(bashTrue...))
	rows = append(rows,
		ratioRow("`bash` tool, `true`, over stdio, p50 — bwrap backend", "bare `bwrap`, same namespaces, `bash -c true`",
			p50["bash-bwrap"], p50["bare-bwrap-bash"], 1.15),
		ratioRow("same — Landlock backend", "plain `bash -c true`",
			p50["bash-landlock"], p50["plain-bash"], 1.5))

	// The helper alone, against the command it execs.
	measure("helper-alone", run(helperBin, "__sandbox-helper", "--", truePath))
	measure("true", run(truePath))
	rows = append(rows, ratioRow("`cordon-helper` alone (privilege drop, seccomp, exec `true`)", "`true`",
		p50["helper-alone"], p50["true"], 0))

	// read_file of 4 KiB against the official filesystem server, through
	// the same minimal client.
	type peer struct {
		cpu, p50  time.Duration
		rss       int
		startup   time.Duration
		name      string
		cmd       func() *exec.Cmd
		tool, arg string
	}
	peers := []*peer{
		{name: "cordon", cmd: func() *exec.Cmd { return serve("bwrap") }, tool: "read_file", arg: "f.txt"},
		{name: "server-filesystem", cmd: func() *exec.Cmd { return exec.Command(fsServer, w.ws) }, tool: "read_text_file", arg: filepath.Join(w.ws, "f.txt")},
	}
	for _, p := range peers {
		b.Run("read-"+p.name, func(b *testing.B) {
			start := time.Now()
			c := startRaw(b, p.cmd())
			p.startup = time.Since(start)
			args := map[string]any{"path": p.arg}
			p.p50 = p50Of(b, func() error { return c.tool(p.tool, args) })
			p.cpu = c.cpuPerCall(b, p.tool, args, 32)
			p.rss = peakRSSKB(b, c.cmd.Process.Pid)
		})
	}
	cordon, official := peers[0], peers[1]
	rows = append(rows,
		ratioRow("server CPU per 4 KiB `read_file`, 32 in flight", "official filesystem server", cordon.cpu, official.cpu, 1.0/3),
		ratioRow("`read_file` 4 KiB p50, one at a time", "official filesystem server", cordon.p50, official.p50, 1/1.6),
		tableRow{what: "peak RSS", floor: "official filesystem server",
			cordon: fmt.Sprintf("%.1f MB", float64(cordon.rss)/1024), base: fmt.Sprintf("%.1f MB", float64(official.rss)/1024),
			ratio: float64(cordon.rss) / float64(official.rss), goal: 1.0 / 5})

	// Start-up to the first initialize answer, probe included, against
	// one bare bwrap run of `true`.
	// The probe runs beside the handshake: the first call that needs the
	// sandbox (sandbox_status) waits for it, and is the second row.
	b.Run("startup", func(b *testing.B) {
		var toInit, toStatus []time.Duration
		for b.Loop() {
			start := time.Now()
			c := startRaw(b, serve("auto"))
			toInit = append(toInit, time.Since(start))
			if err := c.tool("sandbox_status", map[string]any{}); err != nil {
				b.Fatal(err)
			}
			toStatus = append(toStatus, time.Since(start))
			c.in.Close()
			c.cmd.Wait()
		}
		slices.Sort(toInit)
		slices.Sort(toStatus)
		p50["startup"], p50["startup-status"] = toInit[len(toInit)/2], toStatus[len(toStatus)/2]
		b.ReportMetric(float64(p50["startup"].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(p50["startup-status"].Microseconds())/1000, "status-p50-ms")
	})
	measure("bare-bwrap-true", run(append(slices.Clone(bareBwrap), truePath)...))
	rows = append(rows, ratioRow("start-up to the first `initialize` answer (the probe runs beside it)", "one bare `bwrap` run of `true`",
		p50["startup"], p50["bare-bwrap-true"], 3),
		ratioRow("start-up to the first `sandbox_status` answer (the probe's verdict)", "one bare `bwrap` run of `true`",
			p50["startup-status"], p50["bare-bwrap-true"], 0))

	printTable(rows)
}

type tableRow struct {
	what, floor  string
	cordon, base string
	ratio, goal  float64 // goal 0: no target, shown for where the time goes
}

func ratioRow(what, floor string, cordon, base time.Duration, goal float64) tableRow {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
	return tableRow{what: what, floor: floor, cordon: ms(cordon), base: ms(base), ratio: float64(cordon) / float64(base), goal: goal}
}

func printTable(rows []tableRow) {
	fmt.Println("| what | cordon | floor or peer | | ratio | goal |")
	fmt.Println("| --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		if math.IsNaN(r.ratio) {
			continue // not measured in this run (-bench filtered it out)
		}
		goal := "—"
		if r.goal > 0 {
			verdict := "met"
			if r.ratio > r.goal {
				verdict = "**not met**"
			}
			goal = fmt.Sprintf("≤ %.2f× (%s)", r.goal, verdict)
		}
		fmt.Printf("| %s | %s | %s | %s | %.2f× | %s |\n", r.what, r.cordon, r.floor, r.base, r.ratio, goal)
	}
}

// p50Of runs fn b.N times, reports the median and returns it.
func p50Of(b *testing.B, fn func() error) time.Duration {
	ds := timings(b, fn)
	m := ds[len(ds)/2]
	b.ReportMetric(float64(m.Microseconds())/1000, "p50-ms")
	return m
}

// cpuPerCall is the server's CPU time per call with window calls in
// flight, over at least 500 calls (the kernel counts CPU time in 10 ms
// ticks).
func (c *rawClient) cpuPerCall(b *testing.B, name string, args map[string]any, window int) time.Duration {
	n := max(b.N, 500)
	cpu0 := cpuTime(b, c.cmd.Process.Pid)
	c.inFlight(b, n, name, args, window)
	return (cpuTime(b, c.cmd.Process.Pid) - cpu0) / time.Duration(n)
}

// bareBwrapArgv is the bwrap argv cordon builds for this workspace, cut
// before its helper: the same namespaces and mounts, nothing of cordon's.
func bareBwrapArgv(b *testing.B, w *world) []string {
	cmd := exec.Command(cordonBin, "profile", "--json", "--backend", "bwrap", "--workspace", w.ws, "--state-dir", w.state, "--", "true")
	cmd.Env = w.env()
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("cordon profile: %v", err)
	}
	var prof struct{ Argv []string }
	if err := json.Unmarshal(out, &prof); err != nil {
		b.Fatal(err)
	}
	i := slices.Index(prof.Argv, "--")
	if i < 0 {
		b.Fatalf("no -- in the bwrap argv %q", prof.Argv)
	}
	return prof.Argv[:i+1]
}
