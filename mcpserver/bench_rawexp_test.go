//go:build linux

package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

type rawClient struct {
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func (c *rawClient) call(b testing.TB, method string, params any) []byte {
	c.id++
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	msg = append(msg, '\n')
	if _, err := c.in.Write(msg); err != nil {
		b.Fatal(err)
	}
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		if strings.Contains(string(line), fmt.Sprintf(`"id":%d`, c.id)) {
			return line
		}
	}
}

func BenchmarkRawExp(b *testing.B) {
	fsServer, _ := filepath.Abs("../test/interop/node_modules/.bin/mcp-server-filesystem")
	w := newWorld(b)
	content := strings.Repeat("0123456789abcdef\n", 241)
	os.WriteFile(filepath.Join(w.ws, "f.txt"), []byte(content), 0o644)
	for _, s := range []struct{ name string; cmd *exec.Cmd; read string; path string }{
		{"cordon", func() *exec.Cmd { c := exec.Command(cordonBin, w.serveArgs("--log-level", "error")...); c.Env = w.env(); return c }(), "read_file", "f.txt"},
		{"fs", exec.Command(fsServer, w.ws), "read_text_file", filepath.Join(w.ws, "f.txt")},
	} {
		b.Run(s.name, func(b *testing.B) {
			in, _ := s.cmd.StdinPipe()
			out, _ := s.cmd.StdoutPipe()
			s.cmd.Stderr = os.Stderr
			if err := s.cmd.Start(); err != nil {
				b.Fatal(err)
			}
			defer s.cmd.Process.Kill()
			c := &rawClient{in: in, out: bufio.NewReader(out)}
			c.call(b, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}})
			in.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
			b.Run("ping", func(b *testing.B) { latencies(b, func() error { c.call(b, "ping", map[string]any{}); return nil }) })
			b.Run("pipelined-read", func(b *testing.B) {
				const window = 32
				sent, got := 0, 0
				send := func() {
					sent++
					msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 100000 + sent, "method": "tools/call", "params": map[string]any{"name": s.read, "arguments": map[string]any{"path": s.path}}})
					in.Write(append(msg, '\n'))
				}
				b.ResetTimer()
				for sent < b.N && sent < window {
					send()
				}
				for got < b.N {
					line, err := c.out.ReadBytes('\n')
					if err != nil {
						b.Fatal(err)
					}
					if strings.Contains(string(line), "isError\":true") {
						b.Fatal(string(line))
					}
					got++
					if sent < b.N {
						send()
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/call")
			})
			b.Run("read", func(b *testing.B) {
				latencies(b, func() error { c.call(b, "tools/call", map[string]any{"name": s.read, "arguments": map[string]any{"path": s.path}}); return nil })
			})
		})
	}
}
