//go:build linux

package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The official TypeScript SDK clients, v1 (@modelcontextprotocol/sdk,
// 2025-era) and v2 (@modelcontextprotocol/client, both eras), drive cordon
// through the scripts in test/interop (sdk-v1.mjs, sdk-v2.mjs, lib.mjs),
// over stdio and over Streamable HTTP (the script starts `cordon serve
// --http` itself and sends the bearer token from the state dir). Each
// script prints one JSON line per check and exits non-zero on a failure;
// these tests also look at the files on disk and at the session log.

// interopNode returns node and the absolute path of test/interop once the
// npm package pkg is installed there (by .ci/run from the lock file).
func interopNode(t *testing.T, pkg string) (node, dir string) {
	t.Helper()
	dir, _ = filepath.Abs("../test/interop")
	_, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json"))
	if err == nil {
		node, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CORDON_INTEROP") != "" {
			t.Fatalf("CORDON_INTEROP is set but %s cannot run: install node and run npm ci in test/interop (%v)", pkg, err)
		}
		t.Skipf("%s is not installed (npm ci in test/interop); CI installs it and sets CORDON_INTEROP=1", pkg)
	}
	return node, dir
}

// interopChecks are the lines every script must print with "ok": true.
var interopChecks = []string{
	"connect", "tools/list", "bash", "write_file", "read_file", "edit_file", "list_directory",
	"glob", "grep", "sandbox_status", "no elicitation in the default session",
	"connect read-only", "denied", "escalation allow_once", "escalation deny",
	"allow_once grants nothing more", "summary",
}

type interopLine struct {
	Check string   `json:"check"`
	OK    bool     `json:"ok"`
	Argv  []string `json:"argv"`
}

func runInteropScript(t *testing.T, pkg, script, transport, era string) {
	node, dir := interopNode(t, pkg)
	w := newWorld(t)
	args := []string{filepath.Join(dir, script), "--cordon", cordonBin, "--workspace", w.ws, "--state-dir", w.state, "--transport", transport}
	if era != "" {
		args = append(args, "--era", era)
	}
	// What follows "--" goes after `serve --workspace WS --state-dir SD`,
	// so the script starts cordon exactly as w.serveArgs would.
	args = append(args, "--", "--log-level", "debug")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	cmd.Env = w.env()
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &testLogWriter{t: t}
	killGroupOnCancel(cmd)
	start := time.Now()
	err := cmd.Run()
	t.Logf("node %s: %v in %s", strings.Join(args[:len(args)-3], " "), err, time.Since(start).Round(time.Millisecond))

	seen := map[string]bool{}
	for _, raw := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var l interopLine
		if !assert.NoError(t, json.Unmarshal([]byte(raw), &l), "not a JSON check line: %q", raw) {
			continue
		}
		t.Log(raw)
		assert.True(t, l.OK, "check %q failed: %s", l.Check, raw)
		assert.False(t, seen[l.Check], "check %q reported twice", l.Check)
		seen[l.Check] = true
		switch l.Check {
		case "connect", "connect read-only":
			var extra []string
			if l.Check == "connect read-only" {
				extra = append(extra, "--mode", "read-only")
			}
			if transport == "http" {
				extra = append(extra, "--http", "127.0.0.1:0")
			}
			assert.Equal(t, append([]string{cordonBin}, w.serveArgs(extra...)...), l.Argv, "how the script started cordon")
		}
	}
	require.NoError(t, err, "the script exits 0 only when every check passed")
	for _, c := range interopChecks {
		assert.True(t, seen[c], "the script never reported %q", c)
	}

	// The files on disk, whatever the script said.
	assert.Equal(t, "alpha\ngamma\n", fileContent(t, filepath.Join(w.ws, "interop", "hello.txt")), "write_file then edit_file")
	assert.Equal(t, "approved\n", fileContent(t, filepath.Join(w.ws, "approved.txt")), "the approved escalation wrote")
	assert.NoFileExists(t, filepath.Join(w.ws, "denied.txt"), "read-only denied the write")
	assert.NoFileExists(t, filepath.Join(w.ws, "refused.txt"), "the refused escalation wrote nothing")
	assert.Equal(t, "outside\n", fileContent(t, w.outsideFile))

	// The human's two answers are in the session log. (Not every session
	// has calls: the HTTP server has a process session beside the HTTP
	// ones, and the v2 client pinned to 2026-07-28 on stdio probes a
	// sibling process first.)
	var outcomes []string
	for _, id := range listSessions(t, w) {
		for _, line := range strings.Split(cordonCLI(t, w, "log", "--json", id), "\n") {
			if i := strings.Index(line, `"type":"approval/outcome","data":{"decision":"`); i >= 0 {
				rest := line[i+len(`"type":"approval/outcome","data":{"decision":"`):]
				outcomes = append(outcomes, rest[:strings.IndexByte(rest, '"')])
			}
		}
	}
	assert.Equal(t, []string{"allow_once", "deny"}, outcomes)
}

func TestInteropTypeScriptSDKv1(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			runInteropScript(t, "@modelcontextprotocol/sdk", "sdk-v1.mjs", transport, "")
		})
	}
}

func TestInteropTypeScriptSDKv2(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		for _, era := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(transport+"/"+era, func(t *testing.T) {
				runInteropScript(t, "@modelcontextprotocol/client", "sdk-v2.mjs", transport, era)
			})
		}
	}
}
