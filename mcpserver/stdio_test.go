package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stdioPeer is a client of ServeStdio over in-process pipes, with tools
// that exercise the transport rather than the sandbox.
type stdioPeer struct {
	in     *io.PipeWriter
	out    *bufio.Reader
	served chan error
	ended  chan string // what the "wait" tool saw when it ended
}

func newStdioPeer(t *testing.T, ctx context.Context) *stdioPeer {
	s := &Server{log: zerolog.Nop(), mcp: server.NewMCPServer("t", "1", server.WithToolCapabilities(false))}
	p := &stdioPeer{served: make(chan error, 1), ended: make(chan string, 4)}
	s.mcp.AddTool(mcp.NewTool("ask"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := s.mcp.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
			Message: "may I?", RequestedSchema: map[string]any{"type": "object"}}})
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(string(res.Action)), nil
	})
	s.mcp.AddTool(mcp.NewTool("wait"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		p.ended <- ctx.Err().Error()
		return mcp.NewToolResultText("stopped"), nil
	})
	s.mcp.AddTool(mcp.NewTool("progress"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.progress(ctx, req)(0.5, "half")
		return mcp.NewToolResultText("done"), nil
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p.in, p.out = inW, bufio.NewReader(outR)
	go func() { p.served <- s.ServeStdio(ctx, inR, outW); outW.Close() }()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return p
}

// send writes lines, failing the test if the server stops reading them
// (the pipe has no buffer).
func (p *stdioPeer) send(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		done := make(chan error, 1)
		go func() { _, err := io.WriteString(p.in, l+"\n"); done <- err }()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("the server stopped reading: %s", l)
		}
	}
}

// recv is the next line the server writes, decoded.
func (p *stdioPeer) recv(t *testing.T) map[string]any {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		l, _ := p.out.ReadString('\n')
		got <- l
	}()
	select {
	case l := <-got:
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), "the server wrote %q", l)
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message from the server")
		return nil
	}
}

func (p *stdioPeer) initialize(t *testing.T, capabilities string) {
	p.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+capabilities+`,"clientInfo":{"name":"t","version":"1"}}}`)
	require.Contains(t, p.recv(t), "result")
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func callLine(id int, tool string) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"` + tool + `","_meta":{"progressToken":"tok"}}}`
}

func resultText(t *testing.T, m map[string]any) string {
	t.Helper()
	content := m["result"].(map[string]any)["content"].([]any)
	return content[0].(map[string]any)["text"].(string)
}

// TestStdioElicitationWhileReading: a tool that asks the human waits on
// its own goroutine while the transport reads the client's answer (and
// serves other requests meanwhile).
func TestStdioElicitationWhileReading(t *testing.T) {
	p := newStdioPeer(t, t.Context())
	p.initialize(t, `{"elicitation":{}}`)
	p.send(t, callLine(1, "ask"))
	ask := p.recv(t)
	require.Equal(t, "elicitation/create", ask["method"], ask)
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	pong := p.recv(t)
	assert.EqualValues(t, 2, pong["id"], "a request is served while another waits for the client")
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": ask["id"], "result": map[string]any{"action": "decline"}})
	p.send(t, string(answer))
	res := p.recv(t)
	assert.EqualValues(t, 1, res["id"])
	assert.Equal(t, "decline", resultText(t, res))

	p.send(t, callLine(3, "ask"))
	ask = p.recv(t)
	refusal, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": ask["id"], "error": map[string]any{"code": -1, "message": "the user closed the dialog"}})
	p.send(t, string(refusal))
	res = p.recv(t)
	assert.Contains(t, resultText(t, res), "the user closed the dialog", "an error answer reaches the tool")
}

// TestStdioBadInput: every malformed line gets an answer that says what
// was wrong (or, for a stray response, none), and the server serves on.
func TestStdioBadInput(t *testing.T) {
	p := newStdioPeer(t, t.Context())
	p.initialize(t, `{}`)
	cases := []struct {
		line, id string
		code     float64
		says     string
	}{
		{`this is not json`, "<nil>", mcp.PARSE_ERROR, "not valid JSON"},
		{`{"jsonrpc":"2.0","id":1,`, "<nil>", mcp.PARSE_ERROR, "not valid JSON"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "<nil>", mcp.INVALID_REQUEST, "JSON-RPC batch"},
		{`42`, "<nil>", mcp.INVALID_REQUEST, "not a JSON object"},
		{`{"jsonrpc":"2.0","id":5}`, "5", mcp.INVALID_REQUEST, "neither"},
		{`{"jsonrpc":"2.0","id":6,"method":""}`, "6", mcp.INVALID_REQUEST, `"method" must be`},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, "<nil>", mcp.INVALID_REQUEST, `"id" must be`},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"bm8tc3VjaC10b29s"}}`, "7", mcp.INVALID_PARAMS, "invalid cursor"},
	}
	for _, c := range cases {
		p.send(t, c.line)
		m := p.recv(t)
		assert.Equal(t, c.id, stringOf(m["id"]), c.line)
		e, _ := m["error"].(map[string]any)
		require.NotNil(t, e, "%s: %v", c.line, m)
		assert.Equal(t, c.code, e["code"], c.line)
		assert.Contains(t, e["message"], c.says, c.line)
	}
	// A blank line, and an answer to nothing cordon asked, get no reply.
	p.send(t, ``, `   `, `{"jsonrpc":"2.0","id":99,"result":{}}`, `{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	assert.EqualValues(t, 8, p.recv(t)["id"])
}

func stringOf(v any) string {
	if v == nil {
		return "<nil>"
	}
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}

// TestStdioNotificationsBeforeTheResult: a progress notification that a
// tool sends reaches the client, ahead of the tool's result.
func TestStdioNotificationsBeforeTheResult(t *testing.T) {
	p := newStdioPeer(t, t.Context())
	p.initialize(t, `{}`)
	p.send(t, callLine(1, "progress"))
	n := p.recv(t)
	assert.Equal(t, "notifications/progress", n["method"], n)
	assert.Equal(t, "half", n["params"].(map[string]any)["message"])
	assert.Equal(t, "done", resultText(t, p.recv(t)))
}

// TestStdioEndCancelsRequests: when the client closes stdin, requests in
// flight are cancelled and awaited before ServeStdio returns.
func TestStdioEndCancelsRequests(t *testing.T) {
	p := newStdioPeer(t, t.Context())
	p.initialize(t, `{}`)
	p.send(t, callLine(1, "wait"), callLine(2, "wait"))
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	assert.EqualValues(t, 3, p.recv(t)["id"]) // both waits are running by now
	go io.Copy(io.Discard, p.out)             // their answers may come
	require.NoError(t, p.in.Close())
	select {
	case err := <-p.served:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return after stdin closed")
	}
	require.Len(t, p.ended, 2, "each request ended before ServeStdio returned")
	assert.Equal(t, context.Canceled.Error(), <-p.ended)
}

// TestStdioContextEndsServing: ServeStdio returns when its context ends,
// though stdin stays open.
func TestStdioContextEndsServing(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	p := newStdioPeer(t, ctx)
	p.initialize(t, `{}`)
	p.send(t, callLine(1, "wait"), `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	assert.EqualValues(t, 2, p.recv(t)["id"])
	go io.Copy(io.Discard, p.out)
	cancel()
	select {
	case err := <-p.served:
		assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return after its context ended")
	}
	assert.Len(t, p.ended, 1)
}

// TestReadLineDropsOverlongLines: a line over the limit is read to its
// end and dropped; the lines around it are whole.
func TestReadLineDropsOverlongLines(t *testing.T) {
	long := strings.Repeat("y", 100)
	r := bufio.NewReaderSize(strings.NewReader("short\n"+long+"\n"+strings.Repeat("z", 40)+"\nlast"), 16)
	var got []string
	var dropped int
	for {
		line, tooLong, err := readLine(r, 64)
		if tooLong {
			dropped++
		} else if len(line) > 0 {
			got = append(got, string(line))
		}
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
	}
	assert.Equal(t, []string{"short\n", strings.Repeat("z", 40) + "\n", "last"}, got)
	assert.Equal(t, 1, dropped)
}
