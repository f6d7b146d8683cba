//go:build linux

package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkVsFilesystemServer measures cordon against the official
// filesystem MCP server (@modelcontextprotocol/server-filesystem, from
// test/interop's lock file), side by side in one run: the same go-sdk
// client over stdio, the same 4 KiB file, per-call p50/p99, start-up to the
// first initialize answer, and each server's peak memory.
func BenchmarkVsFilesystemServer(b *testing.B) {
	fsServer, _ := filepath.Abs("../test/interop/node_modules/.bin/mcp-server-filesystem")
	if _, err := os.Stat(fsServer); err != nil {
		b.Skip("npm ci in test/interop installs the official filesystem server")
	}
	w := newWorld(b)
	content := strings.Repeat("0123456789abcdef\n", 241) // ~4 KiB
	if err := os.WriteFile(filepath.Join(w.ws, "f.txt"), []byte(content), 0o644); err != nil {
		b.Fatal(err)
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
			cmd := srv.cmd()
			cs, err := newClient(clientOpts{version: "2025-11-25"}).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				b.Fatal(err)
			}
			startup := time.Since(start)
			defer cs.Close()
			callOK := func(name string, args map[string]any) error {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
				if err == nil && res.IsError {
					b.Fatalf("%s %s failed: %v", srv.name, name, res.Content)
				}
				return err
			}
			b.Run("read", func(b *testing.B) {
				latencies(b, func() error { return callOK(srv.read, map[string]any{"path": srv.path("f.txt")}) })
			})
			b.Run("write", func(b *testing.B) {
				latencies(b, func() error {
					return callOK("write_file", map[string]any{"path": srv.path("out.txt"), "content": content})
				})
			})
			b.Run("list", func(b *testing.B) {
				latencies(b, func() error { return callOK(srv.lst, map[string]any{"path": srv.path(".")}) })
			})
			// Go reports metrics of leaf benchmarks only.
			b.Run("startup-and-memory", func(b *testing.B) {
				for b.Loop() {
				}
				b.ReportMetric(float64(startup.Microseconds())/1000, "startup-ms")
				b.ReportMetric(float64(peakRSSKB(b, cmd.Process.Pid)), "peak-rss-kB")
			})
		})
	}
}
