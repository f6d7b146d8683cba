//go:build linux

package escape_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A run is one attempt of one case through one channel.
type run struct {
	t       *testing.T
	g       *group
	w       *world
	c       *escapeCase
	channel string // exec, bash, fence, control
	backend string // bwrap, landlock, or "none" for the positive control
	mode    string // read-only or workspace-write (the guarded trees follow it)
	ws      string // the workspace of this run (ws, or HOME)
	tok     string // unique per run: the attacker's marker
	srv     *server

	ignoreNlink bool

	output   string
	exit     int
	isError  bool
	timedOut bool
	// unavailable: cordon refused to set up the sandbox (exec exit 125
	// with "cordon: sandbox unavailable:", or SANDBOX_UNAVAILABLE).
	unavailable bool
	nested      []string // nested repositories found before the command (guarded())
	vals        map[string]string
	files       map[string]*os.File
}

const attackDone = "ATTACK-DONE"

// Paths the scripts use.
func (r *run) out() string  { return r.w.outside }
func (r *run) home() string { return r.w.home }
func (r *run) pwn() string  { return "PWN-" + r.tok }

// mark is a marker that appears only where the command wrote it: the
// script builds it at run time from markExpr, so that cordon's session log,
// which records the command line, does not hold it.
func (r *run) mark() string     { return "FORGED-" + r.tok }
func (r *run) markExpr() string { return "FORGED$(printf -)" + r.tok }
func (r *run) probe() string    { return bin.probe + " " + probeArg }

// cordonPid is the pid of the cordon process that runs this command (the
// MCP server), or "$PPID" for `cordon exec`, where it is the parent under
// Landlock and bwrap's init under bwrap.
func (r *run) cordonPid() string {
	if r.backend == "none" {
		return r.victimPid()
	}
	if r.srv != nil {
		return fmt.Sprint(r.srv.pid)
	}
	return "$PPID"
}

// pty is the terminal of the cordon process this run goes through.
func (r *run) pty() *pty {
	if r.srv != nil {
		return r.srv.pty
	}
	return r.w.pty
}

// group is one backend in one confined mode: one world, and the MCP
// servers (started on first use) that its cases share.
type group struct {
	backend, mode string
	w             *world
	mu            sync.Mutex
	servers       map[serverKey]*server
	http          *httpServer
}

type serverKey struct{ home, netDeny bool }

type server struct {
	cs     *mcp.ClientSession
	cmd    *exec.Cmd
	pid    int
	pty    *pty
	stderr *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (g *group) close() {
	for _, s := range g.servers {
		s.close()
	}
	if g.http != nil {
		g.http.close()
	}
}

// cordonProcAttr makes a cordon process the leader of its own session
// with term as its controlling terminal (fd 6), and gives it open
// descriptors on the held files (fds 3, 4, 5): what a confined command
// must neither inherit nor reach through /proc.
func (w *world) cordonCmd(term *pty, args ...string) *exec.Cmd {
	cmd := exec.Command(bin.cordon, args...)
	cmd.Env = w.env()
	cmd.Dir = w.held
	cmd.ExtraFiles = append(slices.Clone(w.heldFiles), term.slave)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 6}
	return cmd
}

func (g *group) server(t testing.TB, k serverKey) *server {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.servers[k]; s != nil {
		return s
	}
	s := g.startServer(t, k)
	g.servers[k] = s
	return s
}

func (g *group) dropServer(k serverKey) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.servers[k]; s != nil {
		s.close()
		delete(g.servers, k)
	}
}

func (g *group) startServer(t testing.TB, k serverKey) *server {
	t.Helper()
	ws := g.w.ws
	if k.home {
		ws = g.w.home
	}
	args := []string{"serve", "--workspace", ws, "--state-dir", g.w.state, "--backend", g.backend,
		"--mode", g.mode, "--approval", "never", "--log-level", "warn"}
	if k.netDeny {
		args = append(args, "--network", "deny")
	}
	term, err := openPty()
	must(t, err)
	cmd := g.w.cordonCmd(term, args...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "cordon-escape", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		term.close()
		t.Fatalf("starting cordon serve %v: %v\n%s", args, err, stderr.String())
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("negotiated protocol %s, want 2025-11-25", v)
	}
	return &server{cs: cs, cmd: cmd, pid: cmd.Process.Pid, pty: term, stderr: stderr}
}

func (s *server) close() {
	s.cs.Close()
	s.pty.close()
}

func (s *server) call(tool string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// httpServer is `cordon serve --http` on this group's world: the target of
// the bearer-token case.
type httpServer struct {
	cmd   *exec.Cmd
	url   string
	token string // the bearer token the human's clients are configured with
	pty   *pty
}

func (g *group) httpSrv(t testing.TB) *httpServer {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.http != nil {
		return g.http
	}
	term, err := openPty()
	must(t, err)
	cmd := g.w.cordonCmd(term, "serve", "--http", "127.0.0.1:0", "--workspace", g.w.ws, "--state-dir", g.w.state,
		"--backend", g.backend, "--mode", g.mode, "--approval", "on-request")
	envToken := ""
	if g.backend == "landlock" {
		// Landlock cannot hide a token file, so cordon refuses to
		// generate one there: the human sets one in the environment,
		// which never reaches a command.
		envToken = fmt.Sprintf("env-token-%d", time.Now().UnixNano())
		cmd.Env = append(cmd.Env, "CORDON_HTTP_TOKEN="+envToken)
	}
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, `"addr":"`); i >= 0 && !sent {
				rest := line[i+len(`"addr":"`):]
				addr <- rest[:strings.IndexByte(rest, '"')]
				sent = true
			}
		}
	}()
	h := &httpServer{cmd: cmd, pty: term}
	select {
	case a := <-addr:
		h.url = "http://" + a + "/mcp"
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("cordon serve --http did not start")
	}
	if envToken != "" {
		h.token = envToken
		g.w.tokens = append(g.w.tokens, envToken)
		g.http = h
		return h
	}
	tok, err := os.ReadFile(filepath.Join(g.w.state, "http-token"))
	must(t, err)
	h.token = strings.TrimSpace(string(tok))
	g.w.tokens = append(g.w.tokens, h.token)
	g.http = h
	return h
}

func (h *httpServer) close() {
	h.cmd.Process.Kill()
	h.cmd.Wait()
	h.pty.close()
}

// execCordon runs the script through `cordon exec`.
func (r *run) execCordon(script string, mode string) {
	args := []string{"exec", "--mode", mode, "--workspace", r.ws, "--state-dir", r.w.state}
	if r.backend != "none" {
		args = append(args, "--backend", r.backend)
	}
	if r.c.NetDeny {
		args = append(args, "--network", "deny")
	}
	args = append(args, "--", "bash", "-c", script)
	r.runCmd(r.w.cordonCmd(r.w.pty, args...), "cordon exec")
}

// execUnconfined runs the script with no cordon at all, as the human's own
// shell would, with what a `cordon exec` of it would inherit: the positive
// controls' baseline. (A danger-full-access `cordon exec` is no longer
// one: cordon ends what it leaves running, as for every call.)
func (r *run) execUnconfined(script string) {
	cmd := r.w.cordonCmd(r.w.pty, "-c", script)
	cmd.Path, cmd.Args[0] = "/bin/bash", "bash"
	cmd.Dir = r.ws
	r.runCmd(cmd, "bash")
}

// runCmd runs a command of the run, bounded, and keeps its output and exit.
func (r *run) runCmd(cmd *exec.Cmd, what string) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 3 * time.Second
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(90 * time.Second):
			cmd.Process.Kill()
		}
	}()
	err := cmd.Run()
	close(done)
	r.output = out.String()
	r.exit = 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.exit = ee.ExitCode()
	case err != nil:
		r.t.Fatalf("%s: %v", what, err)
	}
	r.unavailable = r.exit == 125 && strings.Contains(r.output, "cordon: sandbox unavailable:")
	if r.exit == 125 && !r.c.expect(r.backend, r.mode).refused {
		r.t.Errorf("cordon exec could not set up the sandbox (exit 125): %s", r.output)
	}
}

// again runs a second command through the run's channel (a fresh `cordon
// exec`, or the same server's bash tool), for cases whose effect shows only
// at the next call. Its output is added to the run's.
func (r *run) again(script string) {
	first := r.output
	switch {
	case r.channel == "bash":
		r.bashTool(script, r.c.BashArgs)
	case r.backend == "none": // the positive control runs unconfined
		r.execCordon(script, "danger-full-access")
	default:
		r.execCordon(script, r.mode)
	}
	r.output = first + "\n" + r.output
}

// bashTool runs the script through the MCP bash tool.
func (r *run) bashTool(script string, extra map[string]any) {
	args := map[string]any{"command": script, "timeout_ms": 60000}
	for k, v := range extra {
		args[k] = v
	}
	res, err := r.srv.call("bash", args)
	if err != nil {
		r.t.Fatalf("bash tool: %v\nserver log:\n%s", err, r.srv.stderr.String())
	}
	r.isError = res.IsError
	r.output = resultText(res)
	if m, ok := res.StructuredContent.(map[string]any); ok {
		if o, ok := m["output"].(string); ok && !strings.Contains(r.output, o) {
			r.output += "\n" + o
		}
		if code, ok := m["exit_code"].(float64); ok {
			r.exit = int(code)
		}
		if to, ok := m["timed_out"].(bool); ok {
			r.timedOut = to
		}
		if e, ok := m["error"].(map[string]any); ok && e["code"] == "SANDBOX_UNAVAILABLE" {
			r.unavailable = res.IsError
			if !r.c.NoMarker && !r.c.expect(r.backend, r.mode).refused {
				r.t.Errorf("the bash tool could not set up the sandbox: %s", r.output)
			}
		}
	}
}

// evidence is everything that shows the attack had an effect: changes to
// the guarded trees, secrets in the output, system files changed, and the
// case's own checks.
type evidence struct {
	fs, other []string
}

func (e evidence) empty() bool { return len(e.fs) == 0 && len(e.other) == 0 }

func (e evidence) String() string {
	var b strings.Builder
	all := append(slices.Clone(e.other), e.fs...)
	for i, s := range all {
		if i == 12 {
			fmt.Fprintf(&b, "    … and %d more\n", len(all)-i)
			break
		}
		if len(s) > 400 {
			s = s[:400] + "…"
		}
		b.WriteString("    " + s + "\n")
	}
	return b.String()
}

func (r *run) collect(before map[string]string) evidence {
	var e evidence
	after := r.w.snapshot(r.guarded()...)
	if r.ignoreNlink {
		before, after = dropNlink(before), dropNlink(after)
	}
	e.fs = diff(before, after)
	for _, c := range r.w.canaries() {
		if strings.Contains(r.output, c) {
			e.other = append(e.other, fmt.Sprintf("the output holds the secret %q", c))
		}
	}
	for _, line := range strings.Split(r.output, "\n") {
		if probeOK.MatchString(line) {
			e.other = append(e.other, "the probe succeeded: "+strings.TrimSpace(line))
		}
		if strings.Contains(line, "ESCAPED-"+r.tok) {
			e.other = append(e.other, "the script reported success: "+strings.TrimSpace(line))
		}
	}
	if r.c.Serial {
		for _, s := range restoreSystemFiles() {
			e.fs = append(e.fs, "system file changed (restored): "+s)
		}
	}
	if r.c.Check != nil {
		e.other = append(e.other, r.c.Check(r)...)
	}
	return e
}

var nlinkRE = regexp.MustCompile(` nlink=\d+`)

func dropNlink(snap map[string]string) map[string]string {
	out := make(map[string]string, len(snap))
	for k, v := range snap {
		out[k] = nlinkRE.ReplaceAllString(v, "")
	}
	return out
}

// probeOK is the probe's line for a forbidden operation that worked.
var probeOK = regexp.MustCompile(`^probe .*: ok$`)

// applies tells whether the case runs in this group.
func (c *escapeCase) applies(mode string) bool {
	return len(c.Modes) == 0 || slices.Contains(c.Modes, mode)
}

func (c *escapeCase) missing() string {
	for _, n := range c.Needs {
		if _, err := exec.LookPath(n); err != nil {
			return fmt.Sprintf("%s is not installed on this machine", n)
		}
	}
	return ""
}

var runSeq atomic.Int64

func (g *group) newRun(t *testing.T, c *escapeCase, channel string) *run {
	r := &run{t: t, g: g, w: g.w, c: c, channel: channel, backend: g.backend, mode: g.mode,
		ws: g.w.ws, tok: fmt.Sprintf("%x%03d", time.Now().UnixNano(), runSeq.Add(1)%1000), vals: map[string]string{}, files: map[string]*os.File{}}
	if c.Home {
		r.ws = g.w.home
	}
	t.Cleanup(func() {
		for _, f := range r.files {
			f.Close()
		}
	})
	return r
}

func (r *run) script() string {
	return r.c.Script(r) + "\necho " + attackDone + "\n"
}

// serial serializes the cases that touch machine-wide state.
var serial sync.Mutex

// attack runs one case through one channel and judges it.
func (g *group) attack(t *testing.T, c *escapeCase, channel string) {
	if c.Serial {
		serial.Lock()
		defer serial.Unlock()
	}
	r := g.newRun(t, c, channel)
	k := serverKey{home: c.Home, netDeny: c.NetDeny}
	if channel == "bash" {
		if c.Fresh {
			g.dropServer(k)
			defer g.dropServer(k)
		}
		r.srv = g.server(t, k)
	}
	g.w.reset(t)
	if c.Setup != nil {
		c.Setup(r)
	}
	before := g.w.snapshot(r.guarded()...)
	switch channel {
	case "exec":
		r.execCordon(r.script(), g.mode)
	case "bash":
		r.bashTool(r.script(), c.BashArgs)
	}
	e := r.collect(before)
	if channel == "bash" && r.srv != nil {
		if _, err := r.srv.call("sandbox_status", map[string]any{}); err != nil {
			e.other = append(e.other, fmt.Sprintf("cordon serve (pid %d) no longer answers: %v", r.srv.pid, err))
			g.dropServer(k)
		}
	}
	r.judge(e, c.expect(g.backend, g.mode))
	if channel == "bash" {
		for _, f := range c.Fence {
			g.fence(t, c, f, k)
		}
	}
}

// tally counts verdicts per backend and mode for the summary.
var tally = struct {
	sync.Mutex
	m map[string]*verdicts
}{m: map[string]*verdicts{}}

type verdicts struct {
	blocked, refused, gaps int
	escapes                []string
}

func record(group, channel, name string, kind string) {
	tally.Lock()
	defer tally.Unlock()
	v := tally.m[group]
	if v == nil {
		v = &verdicts{}
		tally.m[group] = v
	}
	switch kind {
	case "blocked":
		v.blocked++
	case "refused":
		v.refused++
	case "gap":
		v.gaps++
	default:
		v.escapes = append(v.escapes, name+" via "+channel)
	}
}

// judge compares the evidence with the table's expectation.
func (r *run) judge(e evidence, want outcome) {
	t := r.t
	where := fmt.Sprintf("[%s/%s via %s]", r.backend, r.mode, r.channel)
	group := r.backend + "/" + r.mode
	defer func() {
		switch {
		case t.Failed():
			record(group, r.channel, r.c.Name, "escape")
		case want.refused:
			record(group, r.channel, r.c.Name, "refused")
		case want.gap:
			record(group, r.channel, r.c.Name, "gap")
		default:
			record(group, r.channel, r.c.Name, "blocked")
		}
	}()
	if want.refused {
		r.judgeRefused(e, want, where)
		return
	}
	switch {
	case r.c.TimeoutKill && r.channel == "bash":
		if !r.timedOut {
			t.Errorf("%s %s: the call was meant to be killed by its timeout_ms, but it was not (timed_out false), so the verdict would prove nothing:\n%s", where, r.c.Name, r.output)
		}
	case !r.c.NoMarker && !strings.Contains(r.output, attackDone):
		t.Errorf("%s %s: the attack script did not run to its end, so the verdict would prove nothing:\n%s", where, r.c.Name, r.output)
	}
	var beyond []string
	for _, o := range e.other {
		if strings.HasPrefix(o, "!") {
			beyond = append(beyond, o[1:])
		}
	}
	switch {
	case len(beyond) > 0:
		t.Errorf("ESCAPE %s %s — %s\nevidence beyond any documented gap:\n%soutput:\n%s", where, r.c.Name, r.c.Doc, evidence{other: beyond}, indent(r.output))
	case !want.gap && !e.empty():
		t.Errorf("ESCAPE %s %s — %s\nevidence:\n%soutput:\n%s", where, r.c.Name, r.c.Doc, e, indent(r.output))
	case want.gap && e.empty():
		t.Errorf("%s %s: the documented gap (%s) no longer reproduces: update the table and README.md\noutput:\n%s", where, r.c.Name, want.why, indent(r.output))
	case want.gap && want.intact && len(e.fs) > 0:
		t.Errorf("ESCAPE %s %s — the documented gap (%s) must leave the file system intact, but:\n%soutput:\n%s", where, r.c.Name, want.why, e, indent(r.output))
	case want.gap:
		t.Logf("%s documented gap reproduced (%s):\n%s", where, want.why, e)
	default:
		t.Logf("%s blocked; the command said: %s", where, compact(r.output))
	}
}

// judgeRefused: the policy must have been refused before anything ran.
func (r *run) judgeRefused(e evidence, want outcome, where string) {
	t := r.t
	ran := strings.Contains(r.output, attackDone)
	switch {
	case !r.unavailable || ran:
		how := "cordon exec did not exit 125 with \"cordon: sandbox unavailable:\""
		if r.channel == "bash" {
			how = "the bash tool did not answer isError with SANDBOX_UNAVAILABLE"
		}
		if ran {
			how = "the command ran to its end"
		}
		t.Errorf("ESCAPE %s %s — %s\nthe policy must be refused (%s), but %s (exit %d)\nevidence:\n%soutput:\n%s", where, r.c.Name, r.c.Doc, want.why, how, r.exit, e, indent(r.output))
	case !e.empty():
		t.Errorf("ESCAPE %s %s — refused, yet something changed:\n%soutput:\n%s", where, r.c.Name, e, indent(r.output))
	default:
		t.Logf("%s refused as it must be (%s): %s", where, want.why, compact(r.output))
	}
}

// compact squeezes output into one short line for the log.
func compact(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, attackDone, "")), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func indent(s string) string {
	if len(s) > 6000 {
		s = s[:3000] + "\n…\n" + s[len(s)-3000:]
	}
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// fence runs the equivalent file-tool call: the FS fence must refuse it
// (or, where it may succeed, leave everything guarded unchanged).
func (g *group) fence(t *testing.T, c *escapeCase, f fenceCall, k serverKey) {
	r := g.newRun(t, c, "fence")
	r.ignoreNlink = f.IgnoreNlink
	r.srv = g.server(t, k)
	g.w.reset(t)
	if c.Setup != nil {
		c.Setup(r)
	}
	before := g.w.snapshot(r.guarded()...)
	args := f.Args(r)
	res, err := r.srv.call(f.Tool, args)
	if err != nil {
		t.Fatalf("%s: %v", f.Tool, err)
	}
	r.output = resultText(res)
	e := r.collect(before)
	where := fmt.Sprintf("[%s/%s via %s %v]", r.backend, r.mode, f.Tool, args)
	if !res.IsError && !f.MaySucceed {
		e.other = append(e.other, "the FS fence did not refuse the call")
	}
	if !e.empty() {
		t.Errorf("ESCAPE %s %s — the FS fence let it through\nevidence:\n%sresult:\n%s", where, c.Name, e, indent(r.output))
		record(g.backend+"/"+g.mode, "fence "+f.Tool, c.Name, "escape")
		return
	}
	record(g.backend+"/"+g.mode, "fence "+f.Tool, c.Name, "blocked")
	t.Logf("%s refused by the FS fence: %s", where, firstLine(r.output))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// status is `cordon status --json` as a fresh cordon would see it in this
// world: what the next start trusts.
func (w *world) status(t testing.TB, ws string) map[string]any {
	cmd := exec.Command(bin.cordon, "status", "--json", "--workspace", ws, "--state-dir", w.state)
	cmd.Env = w.env()
	cmd.Dir = w.held
	out, _ := cmd.Output()
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Logf("cordon status --json: %v: %s", err, out)
		return map[string]any{"unreadable": string(out)}
	}
	return m
}

func posture(m map[string]any) string {
	pol, _ := m["policy"].(map[string]any)
	return fmt.Sprintf("status=%v sandbox=%v mode=%v network=%v", m["status"], m["sandbox"], pol["mode"], pol["network"])
}
