package mcpserver

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// encodeMessage appends msg's JSON and a newline to buf: the bytes
// json.Marshal gives, but a tool's result is encoded as a struct rather
// than through CallToolResult.MarshalJSON, which builds a map whose JSON
// encoding/json then scans a second time (for a read_file, the file's
// text twice more).
func encodeMessage(buf *bytes.Buffer, msg any) error {
	if r, ok := msg.(mcp.JSONRPCResponse); ok {
		if res, ok := r.Result.(*mcp.CallToolResult); ok && plainToolResult(res) {
			content := res.Content
			if content == nil {
				content = []mcp.Content{} // "content": [], as MarshalJSON writes it
			}
			msg = toolResponse{JSONRPC: r.JSONRPC, ID: r.ID, Result: toolResult{
				Content: content, IsError: res.IsError, StructuredContent: res.StructuredContent}}
		}
	}
	return json.NewEncoder(buf).Encode(msg)
}

// plainToolResult: res has only the fields toolResult encodes, which is
// every result cordon's tools give. The rest (_meta, a multi round-trip's
// input requests) go through MarshalJSON.
func plainToolResult(res *mcp.CallToolResult) bool {
	return res.Meta == nil && res.ResultType == "" && len(res.RawStructuredContent) == 0 &&
		len(res.InputRequests) == 0 && res.RequestState == ""
}

// toolResponse is a JSON-RPC response carrying a toolResult.
type toolResponse struct {
	JSONRPC string        `json:"jsonrpc"`
	ID      mcp.RequestId `json:"id"`
	Result  toolResult    `json:"result"`
}

// toolResult is CallToolResult's JSON for plainToolResult, its fields in
// the order of MarshalJSON's sorted map keys, so the bytes are the same.
type toolResult struct {
	Content           []mcp.Content `json:"content"`
	IsError           bool          `json:"isError,omitempty"`
	StructuredContent any           `json:"structuredContent,omitempty"`
}

// encodeBuffers keeps the buffers of answers between calls; one that grew
// past maxKeptBuffer (a big file's read) is left to the collector.
var encodeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxKeptBuffer = 1 << 20

func putEncodeBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxKeptBuffer {
		b.Reset()
		encodeBuffers.Put(b)
	}
}
