// Command readfloor is the floor that BenchmarkTable measures cordon's
// read_file against: the least a Go stdio server can do for the same call
// and answer. One goroutine reads a request line, decodes it with
// encoding/json, reads the file, numbers its lines under cordon's header,
// encodes the answer and writes it. No MCP library, no sandbox, no FS
// fence, no session log; every path is read as given.
//
//	go build -o readfloor ./bench/readfloor && readfloor   # speaks MCP on stdio
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Arguments struct {
			Path string `json:"path"`
		} `json:"arguments"`
	} `json:"params"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolResult struct {
	Content []textContent `json:"content"`
	IsError bool          `json:"isError,omitempty"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var r request
		if json.Unmarshal(line, &r) != nil || r.ID == nil {
			continue // a notification, or not JSON-RPC
		}
		var result any = struct{}{}
		switch r.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-06-18",
				"capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo":   map[string]any{"name": "readfloor", "version": "1"}}
		case "tools/call":
			result = readFile(r.Params.Arguments.Path)
		}
		out.Reset()
		if err := enc.Encode(response{"2.0", r.ID, result}); err != nil {
			fmt.Fprintln(os.Stderr, "readfloor:", err)
			os.Exit(1)
		}
		if _, err := os.Stdout.Write(out.Bytes()); err != nil {
			os.Exit(1)
		}
	}
}

func readFile(path string) toolResult {
	data, err := os.ReadFile(path)
	if err != nil {
		return toolResult{Content: []textContent{{"text", err.Error()}}, IsError: true}
	}
	lines := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	b := make([]byte, 0, len(data)+len(data)/8+64)
	b = fmt.Appendf(b, "[%s: lines 1-%d of %d]\n", path, lines, lines)
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n') + 1
		if i == 0 {
			i = len(data)
		}
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, '\t')
		b = append(b, data[:i]...)
		data = data[i:]
	}
	return toolResult{Content: []textContent{{"text", string(b)}}}
}
