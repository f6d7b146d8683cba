//go:build linux

package mcpserver_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFileToolDenials(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, ".git", "hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, ".git", "config"), []byte("[core]\n"), 0o644))
	require.NoError(t, os.Symlink(w.outside, filepath.Join(w.ws, "out")))
	require.NoError(t, os.Symlink(w.secret, filepath.Join(w.ws, "key")))
	cs := w.stdio(t, clientOpts{version: "2025-11-25"})
	call(t, cs, "sandbox_status", nil)
	token := filepath.Join(w.state, "http-token")
	require.NoError(t, os.WriteFile(token, []byte("token-canary\n"), 0o600))

	writes := map[string]string{
		"dotdot":             "../outside/file.txt",
		"absolute outside":   w.outsideFile,
		"symlink to outside": "out/file.txt",
		"new file via link":  "out/new.txt",
		"git hook":           ".git/hooks/x",
		"git config":         ".git/config",
		"cordon config":      ".cordon/config.toml",
		"bashrc":             ".bashrc",
		"credential":         w.secret,
		"http token":         token,
	}
	for name, path := range writes {
		t.Run("write_file/"+name, func(t *testing.T) {
			before := snapshotTree(t, w.base)
			res := call(t, cs, "write_file", map[string]any{"path": path, "content": "evil"})
			assert.True(t, res.IsError)
			assert.True(t, strings.HasPrefix(text(res), "[sandbox: file access denied under workspace-write mode]"), text(res))
			assert.Contains(t, text(res), "call write_file again with sandbox_permissions=")
			assert.Equal(t, true, structured(t, res)["denied"])
			assert.Equal(t, "SANDBOX_DENIED", errorCode(t, res))
			assert.Equal(t, before, snapshotTree(t, w.base), "the file system changed")
		})
		t.Run("edit_file/"+name, func(t *testing.T) {
			before := snapshotTree(t, w.base)
			res := call(t, cs, "edit_file", map[string]any{"path": path, "old_string": "o", "new_string": "0"})
			assert.True(t, res.IsError)
			assert.Equal(t, before, snapshotTree(t, w.base))
		})
	}
	reads := map[string]string{
		"credential":              w.secret,
		"credential through link": "key",
		"proc self root":          "/proc/self/root" + w.secret,
		"http token":              token,
		"state dir session log":   filepath.Join(w.state, "sessions"),
	}
	for name, path := range reads {
		t.Run("read_file/"+name, func(t *testing.T) {
			res := call(t, cs, "read_file", map[string]any{"path": path})
			assert.True(t, res.IsError)
			assert.NotContains(t, text(res), "SECRET-CANARY")
			assert.NotContains(t, text(res), "token-canary")
		})
	}
	for _, tool := range []struct {
		name string
		args map[string]any
	}{
		{"list_directory", map[string]any{"path": filepath.Join(w.home), "depth": 3}},
		{"glob", map[string]any{"pattern": "**/*", "path": w.home}},
		{"grep", map[string]any{"pattern": "CANARY", "path": w.home}},
	} {
		res := call(t, cs, tool.name, tool.args)
		assert.NotContains(t, text(res), "id_canary", tool.name)
		assert.NotContains(t, text(res), "SECRET-CANARY", tool.name)
	}
	res := call(t, cs, "read_file", map[string]any{"path": "a\x00b"})
	assert.Equal(t, "INVALID_ARGUMENT", errorCode(t, res))
}

// TestSymlinkSwappedBetweenCalls: a directory that was fine for one call is
// swapped for a link to outside before the next.
func TestSymlinkSwappedBetweenCalls(t *testing.T) {
	w := newWorld(t)
	cs := w.stdio(t, clientOpts{version: "2025-11-25"})
	sub := filepath.Join(w.ws, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	res := call(t, cs, "write_file", map[string]any{"path": "sub/file.txt", "content": "first"})
	require.False(t, res.IsError, text(res))
	require.NoError(t, os.RemoveAll(sub))
	require.NoError(t, os.Symlink(w.outside, sub))
	res = call(t, cs, "write_file", map[string]any{"path": "sub/file.txt", "content": "evil"})
	assert.True(t, res.IsError)
	assert.Equal(t, "outside\n", fileContent(t, w.outsideFile))
	res = call(t, cs, "read_file", map[string]any{"path": "sub/file.txt"})
	assert.False(t, res.IsError, "reading through a link stays allowed outside the read-deny list")
}

func TestWriteAndEdit(t *testing.T) {
	w := newWorld(t)
	cs := w.stdio(t, clientOpts{version: "2025-11-25"})
	res := call(t, cs, "write_file", map[string]any{"path": "a/b/c.txt", "content": "one\ntwo\nthree\ntwo\n"})
	require.False(t, res.IsError, text(res))
	st := structured(t, res)
	assert.Equal(t, true, st["created"])
	assert.EqualValues(t, 18, st["bytes_written"])
	script := filepath.Join(w.ws, "run.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755))
	res = call(t, cs, "write_file", map[string]any{"path": script, "content": "#!/bin/sh\necho hi\n"})
	require.False(t, res.IsError, text(res))
	assert.Equal(t, false, structured(t, res)["created"])
	fi, err := os.Stat(script)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), "the file mode is kept")

	res = call(t, cs, "edit_file", map[string]any{"path": "a/b/c.txt", "old_string": "missing", "new_string": "x"})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "not found")
	res = call(t, cs, "edit_file", map[string]any{"path": "a/b/c.txt", "old_string": "two", "new_string": "2"})
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "replace_all")
	assert.Equal(t, "one\ntwo\nthree\ntwo\n", fileContent(t, filepath.Join(w.ws, "a/b/c.txt")), "unchanged after errors")
	res = call(t, cs, "edit_file", map[string]any{"path": "a/b/c.txt", "old_string": "two", "new_string": "2", "replace_all": true})
	require.False(t, res.IsError, text(res))
	assert.EqualValues(t, 2, structured(t, res)["replacements"])
	assert.Contains(t, text(res), "-two")
	assert.Contains(t, text(res), "+2")
	assert.Equal(t, text(res), structured(t, res)["diff"], "structuredContent carries the same diff")
	assert.Equal(t, "one\n2\nthree\n2\n", fileContent(t, filepath.Join(w.ws, "a/b/c.txt")))
}

// TestWriteSurvivesKill kills the server while it writes a large file: the
// old content must be intact.
func TestWriteSurvivesKill(t *testing.T) {
	w := newWorld(t)
	target := filepath.Join(w.ws, "big.txt")
	old := strings.Repeat("old content\n", 1000)
	require.NoError(t, os.WriteFile(target, []byte(old), 0o644))
	big := strings.Repeat("N", 48<<20)
	request := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":%q,"content":%q}}}`+"\n", target, big)
	// Kill at different moments: while the request arrives, while the
	// server decodes it, while it writes and fsyncs.
	for round, delay := range []time.Duration{200, 500, 900, 1400} {
		raw := newRawStdio(t, w)
		raw.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		raw.recv(t)
		go io.WriteString(raw.in, request) // fails with EPIPE once the server is killed
		time.Sleep(delay * time.Millisecond)
		raw.kill()
		got := fileContent(t, target)
		assert.True(t, got == old || got == big, "round %d: the target holds a torn write (%d bytes)", round, len(got))
		entries, _ := os.ReadDir(w.ws)
		for _, e := range entries {
			assert.False(t, strings.HasPrefix(e.Name(), ".cordon-"), "no temp file left: %s", e.Name())
		}
	}
}

func TestReadFile(t *testing.T) {
	w := newWorld(t)
	var lines []string
	for i := 1; i <= 50; i++ {
		lines = append(lines, "line "+strconv.Itoa(i))
	}
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "f.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "bin"), []byte{0x7f, 'E', 'L', 'F', 0, 1, 2, 3}, 0o644))
	var pngBuf bytes.Buffer
	require.NoError(t, png.Encode(&pngBuf, image.NewRGBA(image.Rect(0, 0, 4, 4))))
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "pic.png"), pngBuf.Bytes(), 0o644))
	sparse, err := os.Create(filepath.Join(w.ws, "sparse"))
	require.NoError(t, err)
	require.NoError(t, sparse.Truncate(2<<30))
	sparse.Close()

	cs := w.stdio(t, clientOpts{version: "2025-11-25"})
	res := call(t, cs, "read_file", map[string]any{"path": "f.txt", "offset": 10, "limit": 3})
	require.False(t, res.IsError, text(res))
	assert.Nil(t, res.StructuredContent, "read_file is text only (SPEC §5)")
	header, body, _ := strings.Cut(text(res), "\n")
	assert.Equal(t, "["+filepath.Join(w.ws, "f.txt")+": lines 10-12 of 50, truncated]", header, "range and total lines in the header")
	assert.True(t, strings.HasPrefix(body, "    10\tline 10\n    11\tline 11\n    12\tline 12\n"), body)
	assert.NotContains(t, text(res), "line 13")

	res = call(t, cs, "read_file", map[string]any{"path": "bin"})
	assert.Equal(t, "BINARY_FILE", errorCode(t, res))
	res = call(t, cs, "read_file", map[string]any{"path": "pic.png"})
	require.False(t, res.IsError, text(res))
	var img *mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			img = ic
		}
	}
	require.NotNil(t, img, "a PNG comes back as image content")
	assert.Equal(t, "image/png", img.MIMEType)
	assert.Equal(t, pngBuf.Bytes(), img.Data)
	res = call(t, cs, "read_file", map[string]any{"path": "missing.txt"})
	assert.Equal(t, "NOT_FOUND", errorCode(t, res))

	pid := serverPID(t, w)
	before := rssKB(t, pid)
	res = call(t, cs, "read_file", map[string]any{"path": "sparse", "limit": 10})
	assert.True(t, res.IsError || len(text(res)) < 100000)
	after := rssKB(t, pid)
	assert.Less(t, after-before, 64*1024, "reading 10 lines of a 2 GB file keeps the server's memory flat (%d → %d kB)", before, after)
}

// TestGrepLiteral: grep's literal argument, from the tool table to the
// client: listed in the schema, decoded, and a plain-string search.
func TestGrepLiteral(t *testing.T) {
	w := newWorld(t)
	require.NoError(t, os.WriteFile(filepath.Join(w.ws, "calc.go"), []byte("x := f(a.b)\ny := f(aXb)\n"), 0o644))
	cs := w.stdio(t, clientOpts{version: "2025-11-25"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	for _, tool := range list.Tools {
		if tool.Name == "grep" {
			props := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
			assert.Equal(t, "boolean", props["literal"].(map[string]any)["type"])
		}
	}

	res := call(t, cs, "grep", map[string]any{"pattern": "f(a.b)", "literal": true})
	require.False(t, res.IsError, text(res))
	assert.Equal(t, []string{"calc.go:1:x := f(a.b)"}, toStrings(structured(t, res)["matches"]))
	res = call(t, cs, "grep", map[string]any{"pattern": "f(a.b"})
	assert.Equal(t, "INVALID_ARGUMENT", errorCode(t, res), "without literal the pattern is RE2")
	res = call(t, cs, "grep", map[string]any{"pattern": "f(a.b)", "literal": "yes"})
	assert.Equal(t, "INVALID_ARGUMENT", errorCode(t, res))
	assert.Contains(t, text(res), `argument "literal" must be a boolean`)
}

func TestLargeOutputKeepsMemoryBounded(t *testing.T) {
	w := newWorld(t)
	cs := w.stdio(t, clientOpts{version: "2025-11-25"})
	call(t, cs, "sandbox_status", nil)
	pid := serverPID(t, w)
	res := call(t, cs, "bash", map[string]any{"command": "head -c 50000000 /dev/urandom | base64"})
	assert.Equal(t, true, structured(t, res)["truncated"])
	assert.Less(t, peakRSSKB(t, pid), 100*1024, "50 MB of output must not be held in memory")
}

// serverPID finds the cordon serving this world (the only one).
func serverPID(t testing.TB, w *world) int {
	t.Helper()
	out, err := exec.Command("pgrep", "-f", "--", "--state-dir "+w.state).Output()
	require.NoError(t, err)
	pids := strings.Fields(string(out))
	require.NotEmpty(t, pids)
	pid, err := strconv.Atoi(pids[0])
	require.NoError(t, err)
	return pid
}

func statusField(t testing.TB, pid int, field string) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.Fields(rest)[0])
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

func rssKB(t testing.TB, pid int) int     { return statusField(t, pid, "VmRSS") }
func peakRSSKB(t testing.TB, pid int) int { return statusField(t, pid, "VmHWM") }

// snapshotTree records every entry beneath dir without following links.
func snapshotTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || strings.Contains(p, "/sessions/") || strings.Contains(p, "/stubs") || strings.HasSuffix(p, "/sessions") {
			return nil // the session log grows with every call
		}
		if parent := filepath.Base(filepath.Dir(p)); strings.HasPrefix(filepath.Base(p), "probe-") && (parent == "cordon" || parent == "probe") {
			// The start-up probe's scratch directory (<state-dir>/probe/probe-*),
			// made and removed by cordon beside the first calls.
			if fi.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if fi.IsDir() && filepath.Base(p) == "guard" && filepath.Base(filepath.Dir(p)) == "cordon" {
			// The guard's store (~/.local/state/cordon/guard), made by the
			// first guarded call and kept, empty, between calls: what is
			// in it is still compared.
			return nil
		}
		desc := fmt.Sprintf("%v %d", fi.Mode(), fi.Size())
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			desc += " " + string(b)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			desc += fmt.Sprintf(" ino=%d", st.Ino)
		}
		snap[p] = desc
		return nil
	})
	return snap
}
