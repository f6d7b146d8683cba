package mcpserver

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEncodeMessageAsMarshal: what the stdio transport writes is, byte
// for byte, json.Marshal's encoding of the same message and a newline, on
// the struct path and on MarshalJSON's.
func TestEncodeMessageAsMarshal(t *testing.T) {
	tricky := "say \"hi\" <b>&amp;</b> C:\\x \t\x01 \u2028\u2029 caf\u00e9 \xff\xfe end\n"
	results := map[string]*mcp.CallToolResult{
		"text":             {Content: []mcp.Content{mcp.NewTextContent(tricky)}},
		"no content":       {},
		"empty text":       {Content: []mcp.Content{mcp.NewTextContent("")}},
		"structured":       {Content: []mcp.Content{mcp.NewTextContent("x")}, StructuredContent: map[string]any{"z": 1, "a": []any{"<&>", nil}, "m": tricky}},
		"typed nil struct": {StructuredContent: map[string]any(nil)},
		"error":            {Content: []mcp.Content{mcp.NewTextContent("denied")}, IsError: true, StructuredContent: map[string]any{"denied": true}},
		"image":            {Content: []mcp.Content{mcp.NewImageContent("aGk=", "image/png"), mcp.NewTextContent("caption")}},
		"annotated":        {Content: []mcp.Content{mcp.TextContent{Type: "text", Text: "a", Annotated: mcp.Annotated{Annotations: &mcp.Annotations{Priority: ptr(0.5)}}}}},
		// MarshalJSON's path:
		"meta":           {Result: mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{"k": "v"}}}, Content: []mcp.Content{mcp.NewTextContent("m")}},
		"result type":    {Result: mcp.Result{ResultType: mcp.ResultTypeComplete}},
		"raw structured": {RawStructuredContent: json.RawMessage(`{"b":1,  "a":2}`)},
		"request state":  {MultiRoundTripResult: mcp.MultiRoundTripResult{RequestState: "s"}},
	}
	for name, res := range results {
		t.Run(name, func(t *testing.T) {
			for _, id := range []any{int64(7), "req-<1>", float64(1.5)} {
				msg := mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), res)
				want, err := json.Marshal(msg)
				require.NoError(t, err)
				var got bytes.Buffer
				require.NoError(t, encodeMessage(&got, msg))
				assert.Equal(t, string(want)+"\n", got.String())
			}
		})
	}
	for _, msg := range []any{
		mcp.NewJSONRPCResultResponse(mcp.NewRequestId(1), map[string]any{}),
		mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/progress"}},
		rpcError{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: rpcErrorDetail{-32700, "<parse>"}},
	} {
		want, err := json.Marshal(msg)
		require.NoError(t, err)
		var got bytes.Buffer
		require.NoError(t, encodeMessage(&got, msg))
		assert.Equal(t, string(want)+"\n", got.String())
	}
}

func ptr[T any](v T) *T { return &v }

// TestToolResultFieldsKnown: plainToolResult decides which results the
// struct encodes; a field that a newer mcp-go adds to CallToolResult must
// be weighed there (and listed here) before the struct path may skip it.
func TestToolResultFieldsKnown(t *testing.T) {
	known := []string{"Meta", "ResultType", "InputRequests", "RequestState", "Content", "StructuredContent", "RawStructuredContent", "IsError"}
	var fields []string
	var walk func(reflect.Type)
	walk = func(ty reflect.Type) {
		for f := range ty.Fields() {
			if f.Anonymous {
				walk(f.Type)
			} else {
				fields = append(fields, f.Name)
			}
		}
	}
	walk(reflect.TypeFor[mcp.CallToolResult]())
	assert.ElementsMatch(t, known, fields, "mcp.CallToolResult's fields changed: update plainToolResult and toolResult")
}

// BenchmarkEncodeToolResult: a 4 KiB read_file's answer, as json.Marshal
// writes it (mcp-go's stdio transport) and as encodeMessage does.
func BenchmarkEncodeToolResult(b *testing.B) {
	text := strings.Repeat(strings.Repeat("x", 63)+"\n", 64)
	msg := mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(42)), &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}})
	b.Run("marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encodeMessage", func(b *testing.B) {
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			if err := encodeMessage(&buf, msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
