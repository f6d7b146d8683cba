//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWrapBadFlags: a bad class or name is a usage error naming the fix,
// and nothing runs.
func TestWrapBadFlags(t *testing.T) {
	ws := t.TempDir()
	r := cordon(t, nil, ws, "wrap", "--state-dir", t.TempDir(), "--class", "daemon", "--", "true")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, `--class "daemon": use mcp_server or external_agent`)
	r = cordon(t, nil, ws, "wrap", "--state-dir", t.TempDir(), "--name", "../up", "--", "true")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "one path element")
	r = cordon(t, nil, ws, "wrap", "--state-dir", t.TempDir(), "--allow-domain", "a.test", "--", "true")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, "--allow-domain is for --network restricted")
}

// TestWrapClassProfile: [profiles.mcp_server] sets the class's network and
// adds to its lists; --network still outranks it.
func TestWrapClassProfile(t *testing.T) {
	e := newCfgEnv(t)
	extra := filepath.Join(e.base, "server-cache")
	require.NoError(t, os.MkdirAll(extra, 0o755))
	e.write(t, e.userFile(), "network = \"deny\"\n[profiles.mcp_server]\nnetwork = \"restricted\"\nallowed_domains = [\"api.github.com\"]\nextra_write_allow = [\""+extra+"\"]\n")
	profile := func(args ...string) map[string]any {
		r := e.run(t, nil, "profile", append([]string{"--json", "--class", "mcp_server"}, args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		var rep map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
		return rep
	}
	rep := profile("--", "npx", "-y", "@modelcontextprotocol/server-github")
	assert.Equal(t, "restricted", rep["network"], "the class's network replaces the global deny")
	classDir := filepath.Join(e.state, "wrap", "modelcontextprotocol-server-github")
	assert.Equal(t, classDir, rep["class_dir"])
	assert.Contains(t, rep["writable_roots"], classDir)
	assert.Contains(t, rep["writable_roots"], extra)
	assert.NotContains(t, rep["writable_roots"], e.ws, "the workspace stays read-only")
	assert.Equal(t, "allow", profile("--network", "allow", "--", "my-server")["network"], "the flag outranks the profile")

	st := e.status(t)
	classes := st["wrap_classes"].(map[string]any)
	mcp := classes["mcp_server"].(map[string]any)
	assert.Equal(t, "restricted", mcp["network"])
	assert.Equal(t, []any{"api.github.com"}, mcp["allowed_domains"])
	assert.Equal(t, "allow", classes["external_agent"].(map[string]any)["network"])
}

// TestWrapWorkspaceUnderTmp: a workspace under the host's /tmp (which bwrap
// replaces) stays readable and read-only for a wrapped program, on both
// backends; the program runs in it.
func TestWrapWorkspaceUnderTmp(t *testing.T) {
	ws, err := os.MkdirTemp("/tmp", "cordon-wrap-ws-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(ws) })
	require.NoError(t, os.WriteFile(filepath.Join(ws, "f"), []byte("inside\n"), 0o644))
	state := filepath.Join(t.TempDir(), "state")
	for _, backend := range []string{"bwrap", "landlock"} {
		r := cordon(t, nil, ws, "wrap", "--backend", backend, "--state-dir", state, "--", "sh", "-c", "pwd; cat f; echo x > g")
		assert.Contains(t, r.stdout, ws+"\ninside\n", "%s: %s", backend, r.stderr)
		assert.NotEqual(t, 0, r.code)
		assert.NoFileExists(t, filepath.Join(ws, "g"), backend)
	}
}

// TestWrapNpxInstallsIntoTheClassDirectory: npx, as a client config runs
// a server, installs the package into the class directory's npm cache on
// the first run, and the next run finds it there with no network at all.
func TestWrapNpxInstallsIntoTheClassDirectory(t *testing.T) {
	if _, err := exec.LookPath("npx"); err != nil {
		t.Fatalf("npx is needed (.ci/run installs npm): %v", err)
	}
	base, err := os.MkdirTemp("/var/tmp", "cordon-npx-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	tgz := filepath.Join(base, "tiny-server-1.0.0.tgz")
	pkg := filepath.Join(base, "package")
	require.NoError(t, os.MkdirAll(pkg, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"tiny-server","version":"1.0.0","bin":{"tiny-server":"index.js"}}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "index.js"), []byte("#!/usr/bin/env node\nconsole.log('tiny server up')\n"), 0o755))
	out, err := exec.Command("tar", "czf", tgz, "-C", base, "package").CombinedOutput()
	require.NoError(t, err, "%s", out)
	ws := filepath.Join(base, "ws")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	env := []string{"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false"}
	for _, backend := range []string{"bwrap", "landlock"} {
		state := filepath.Join(base, "state-"+backend)
		npx := []string{"npx", "-y", "--package=file:" + tgz, "tiny-server"}
		r := cordon(t, env, ws, append([]string{"wrap", "--backend", backend, "--state-dir", state, "--name", "tiny", "--"}, npx...)...)
		require.Equal(t, 0, r.code, "%s: %s", backend, r.stderr)
		assert.Contains(t, r.stdout, "tiny server up")
		assert.DirExists(t, filepath.Join(state, "wrap", "tiny", "npm", "_npx"), "installed into the class directory")
		r = cordon(t, env, ws, append([]string{"wrap", "--backend", backend, "--state-dir", state, "--name", "tiny", "--network", "deny", "--"}, npx...)...)
		require.Equal(t, 0, r.code, "%s, second run, no network: %s", backend, r.stderr)
		assert.Contains(t, r.stdout, "tiny server up")
	}
}

// TestWrapProgramUnderTmp: a program installed under the host's /tmp (an
// unpacked release, a `go build -o /tmp/…`, a node_modules of a checkout
// there) runs wrapped on both backends, with what it loads beside it,
// read-only; nothing else of the host's /tmp becomes visible under bwrap,
// where /tmp is the session's own.
func TestWrapProgramUnderTmp(t *testing.T) {
	prog, err := os.MkdirTemp("/tmp", "cordon-wrap prog-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(prog) })
	neighbour, err := os.MkdirTemp("/tmp", "cordon-wrap-neighbour-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(neighbour) })
	secret := filepath.Join(neighbour, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("neighbour secret\n"), 0o644))
	bin := filepath.Join(prog, "node_modules", ".bin")
	lib := filepath.Join(prog, "node_modules", "server", "lib.sh")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Dir(lib), 0o755))
	require.NoError(t, os.WriteFile(lib, []byte("echo loaded-from-lib\nNEIGHBOUR='"+secret+"'\n"), 0o644))
	main := filepath.Join(prog, "node_modules", "server", "main.sh")
	require.NoError(t, os.WriteFile(main, []byte("#!/bin/sh\n. \"$(dirname \"$(readlink -f \"$0\")\")/lib.sh\"\ncat \"$NEIGHBOUR\" 2>/dev/null || echo neighbour-hidden\n(echo x > \"$(dirname \"$(readlink -f \"$0\")\")/written\") 2>/dev/null || echo read-only\n"), 0o755))
	require.NoError(t, os.Symlink("../server/main.sh", filepath.Join(bin, "server")))

	ws := t.TempDir()
	state := filepath.Join(t.TempDir(), "state")
	// The neighbour's path reaches the program in its own files, not on
	// the command line (a path the human types there is theirs to show).
	var env []string
	for _, backend := range []string{"bwrap", "landlock"} {
		r := cordon(t, env, ws, "wrap", "--backend", backend, "--state-dir", state, "--", filepath.Join(bin, "server"))
		require.Equal(t, 0, r.code, "%s: %s", backend, r.stderr)
		assert.Contains(t, r.stdout, "loaded-from-lib\n", backend)
		assert.Contains(t, r.stdout, "read-only\n", backend)
		assert.NoFileExists(t, filepath.Join(prog, "node_modules", "server", "written"), backend)
		if backend == "bwrap" {
			assert.Contains(t, r.stdout, "neighbour-hidden\n", "the rest of the host's /tmp stays out of sight")
			assert.NotContains(t, r.stdout, "neighbour secret")
		}
	}
	// exec makes the same choice.
	r := cordon(t, env, ws, "exec", "--backend", "bwrap", "--state-dir", state, "--", filepath.Join(bin, "server"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "loaded-from-lib\nneighbour-hidden\nread-only\n")

	// So does a user who is not root (bwrap then makes a user namespace of
	// its own): most people run it so.
	if os.Geteuid() != 0 {
		return
	}
	setpriv, err := exec.LookPath("setpriv")
	require.NoError(t, err, "setpriv (util-linux) runs the wrapped program as nobody")
	base, err := os.MkdirTemp("/var/tmp", "cordon-wrap-nobody-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o777))
	for _, p := range []string{prog, filepath.Dir(cordonBin)} {
		require.NoError(t, os.Chmod(p, 0o755))
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups",
		cordonBin, "wrap", "--backend", "bwrap", "--state-dir", filepath.Join(base, "state"), "--", filepath.Join(bin, "server"))
	cmd.Dir, cmd.Env = base, append(os.Environ(), "HOME="+base)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "as nobody: %s", out)
	assert.Contains(t, string(out), "loaded-from-lib\nneighbour-hidden\nread-only\n", "as nobody")
	assert.NoFileExists(t, filepath.Join(prog, "node_modules", "server", "written"))
}

// TestWrapClassDirPerScript: two servers that one interpreter runs, `node
// a.js` and `node b.js`, get class directories of their own: the data
// one keeps is not the other's to read or overwrite.
func TestWrapClassDirPerScript(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is needed: %v", err)
	}
	ws := t.TempDir()
	state := filepath.Join(t.TempDir(), "state")
	script := `const fs = require("fs"); const f = process.env.XDG_DATA_HOME + "/who";
fs.mkdirSync(process.env.XDG_DATA_HOME, {recursive: true});
let before = ""; try { before = fs.readFileSync(f, "utf8") } catch {}
fs.writeFileSync(f, %q); console.log("before=" + before);`
	for _, name := range []string{"a", "b"} {
		require.NoError(t, os.WriteFile(filepath.Join(ws, name+".js"), []byte(fmt.Sprintf(script, name)), 0o644))
	}
	for _, name := range []string{"a", "b"} {
		r := cordon(t, nil, ws, "wrap", "--state-dir", state, "--", "node", name+".js")
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, "before=\n", r.stdout, "%s.js finds nothing the other left", name)
		assert.Equal(t, name, readFileString(t, filepath.Join(state, "wrap", name, "data", "who")))
	}
	assert.NoDirExists(t, filepath.Join(state, "wrap", "node"))
}
