//go:build linux

package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Protocol errors over Streamable HTTP (SPEC §9): what JSON-RPC 2.0 and
// the MCP transport say a server answers to what a client should not send.

type rpcReply struct {
	ID    json.RawMessage `json:"id"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
}

func decodeReply(t *testing.T, r rawReply) rpcReply {
	t.Helper()
	var rep rpcReply
	require.NoError(t, json.Unmarshal([]byte(r.body), &rep), "not a JSON-RPC message: %d %q", r.status, r.body)
	return rep
}

func modernHeaders() map[string]string {
	return map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list", "Mcp-Session-Id": ""}
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`

func TestHTTPInvalidRequests(t *testing.T) {
	c := newRawHTTP(t, newWorld(t))
	c.initialize(t)
	for _, tc := range []struct {
		name, body string
		code       int
		id         string
		says       string
	}{
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, -32600, "null", "batch"},
		{"empty batch", `[]`, -32600, "null", "batch"},
		{"neither method nor result", `{"jsonrpc":"2.0","id":3}`, -32600, "3", `neither "method"`},
		{"nothing at all", `{"jsonrpc":"2.0"}`, -32600, "null", `neither "method"`},
		{"not an object", `42`, -32600, "null", "not a JSON object"},
		{"method not a string", `{"jsonrpc":"2.0","id":"a","method":7}`, -32600, `"a"`, `"method" must be`},
		{"method and result", `{"jsonrpc":"2.0","id":4,"method":"ping","result":{}}`, -32600, "4", "not both"},
		{"result and error", `{"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"x"}}`, -32600, "5", "not both"},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, -32600, "null", `"id"`},
		{"id an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null", `"id" must be`},
		{"not JSON", `{"jsonrpc":"2.0","id":6,"method":`, -32700, "null", "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.post(t, tc.body)
			assert.Equal(t, http.StatusBadRequest, r.status, r.body)
			rep := decodeReply(t, r)
			require.NotNil(t, rep.Error, r.body)
			assert.Equal(t, tc.code, rep.Error.Code, r.body)
			assert.JSONEq(t, tc.id, string(rep.ID), "the id of the invalid message, or null")
			assert.Contains(t, rep.Error.Message, tc.says)
		})
	}
	// A 2026-07-28 client gets the same answer to a batch.
	r := c.do(t, http.MethodPost, `[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta+`}}]`, modernHeaders())
	assert.Equal(t, http.StatusBadRequest, r.status, r.body)
	assert.Equal(t, -32600, decodeReply(t, r).Error.Code)

	// What is valid still is: a request, a notification, a response.
	r = c.post(t, `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	assert.Equal(t, http.StatusOK, r.status, r.body)
	assert.JSONEq(t, `{}`, string(decodeReply(t, r).Result))
	r = c.post(t, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	assert.Equal(t, http.StatusAccepted, r.status, r.body)
	r = c.post(t, `{"jsonrpc":"2.0","id":8,"result":{}}`)
	assert.Equal(t, http.StatusAccepted, r.status, r.body)
}

func TestHTTPSessionID(t *testing.T) {
	c := newRawHTTP(t, newWorld(t))
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`

	// No session yet, and no id sent: 400, whatever the method.
	r := c.post(t, ping)
	assert.Equal(t, http.StatusBadRequest, r.status, r.body)
	rep := decodeReply(t, r)
	require.NotNil(t, rep.Error)
	assert.JSONEq(t, "1", string(rep.ID))
	assert.Contains(t, rep.Error.Message, "Mcp-Session-Id")
	assert.Contains(t, rep.Error.Message, "initialize")

	c.initialize(t)
	noSession := map[string]string{"Mcp-Session-Id": ""}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		body := ""
		if method == http.MethodPost {
			body = ping
		}
		r := c.do(t, method, body, noSession)
		assert.Equal(t, http.StatusBadRequest, r.status, "%s without Mcp-Session-Id: %s", method, r.body)
		assert.Contains(t, r.body, "missing session id", method)
	}
	r = c.do(t, http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, noSession)
	assert.Equal(t, http.StatusBadRequest, r.status, "a notification needs the session too: %s", r.body)

	// An id cordon does not know: 404, so that the client starts anew.
	r = c.do(t, http.MethodPost, ping, map[string]string{"Mcp-Session-Id": "mcp-session-00000000-0000-0000-0000-000000000000"})
	assert.Equal(t, http.StatusNotFound, r.status, r.body)

	// The session works, until it is deleted; then its id is unknown.
	r = c.post(t, ping)
	assert.Equal(t, http.StatusOK, r.status, r.body)
	r = c.do(t, http.MethodDelete, "", nil)
	assert.Equal(t, http.StatusOK, r.status, r.body)
	r = c.post(t, ping)
	assert.Equal(t, http.StatusNotFound, r.status, "a terminated session: %s", r.body)

	// A 2026-07-28 client has no session, and needs no id.
	r = c.do(t, http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+modernMeta+`}}`, modernHeaders())
	assert.Equal(t, http.StatusOK, r.status, r.body)
	assert.Contains(t, r.body, `"name":"bash"`)
}

// TestHTTPCancelledRequest: a request the client cancels with
// notifications/cancelled gets no response; its command is killed; the
// session goes on. Both before the response became a stream, and after
// (progress notifications make it one).
func TestHTTPCancelledRequest(t *testing.T) {
	for _, progress := range []bool{false, true} {
		t.Run(fmt.Sprintf("progress=%v", progress), func(t *testing.T) {
			w := newWorld(t)
			c := newRawHTTP(t, w)
			c.initialize(t)
			started, finished := filepath.Join(w.ws, "started"), filepath.Join(w.ws, "finished")
			// bash reports progress every 2 s.
			meta, runs, first := "", 3*time.Second, time.Duration(0)
			if progress {
				meta, runs, first = `,"_meta":{"progressToken":"p"}`, 5*time.Second, 2500*time.Millisecond
			}
			call := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bash","arguments":{"command":"touch %s; sleep %d; touch %s"}%s}}`,
				started, int(runs.Seconds()), finished, meta)
			done := make(chan rawReply, 1)
			go func() {
				r, err := c.try(http.MethodPost, call, nil)
				if err != nil {
					r.body = "error: " + err.Error()
				}
				done <- r
			}()
			require.Eventually(t, func() bool { return fileContent(t, started) != "<absent>" }, 20*time.Second, 20*time.Millisecond, "the command started")
			start := time.Now()
			time.Sleep(first)
			r := c.post(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"the user changed their mind"}}`)
			assert.Equal(t, http.StatusAccepted, r.status, r.body)

			var reply rawReply
			select {
			case reply = <-done:
			case <-time.After(2500 * time.Millisecond):
				t.Fatal("the cancelled request's HTTP response did not end")
			}
			assert.Equal(t, http.StatusOK, reply.status)
			assert.Equal(t, "text/event-stream", reply.header.Get("Content-Type"))
			assert.NotContains(t, reply.body, `"id":7`, "no response for the cancelled request")
			assert.NotContains(t, reply.body, `"result"`)
			if progress {
				assert.Contains(t, reply.body, "notifications/progress", "what was sent before the cancellation stays sent")
			}
			time.Sleep(time.Until(start.Add(runs + 500*time.Millisecond)))
			assert.NoFileExists(t, finished, "the command was killed")

			r = c.post(t, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo still here"}}}`)
			assert.Equal(t, http.StatusOK, r.status, r.body)
			assert.Contains(t, r.body, "still here")
		})
	}
}

// TestHTTPCancelOnlyOwnSession: a cancellation names a request of its own
// session; the same id in another session is not cancelled.
func TestHTTPCancelOnlyOwnSession(t *testing.T) {
	w := newWorld(t)
	a := newRawHTTP(t, w)
	a.initialize(t)
	b := &rawHTTP{url: a.url, token: a.token}
	b.initialize(t)
	done := make(chan rawReply, 1)
	go func() {
		r, err := a.try(http.MethodPost, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 1; echo finished"}}}`, nil)
		if err != nil {
			r.body = "error: " + err.Error()
		}
		done <- r
	}()
	time.Sleep(300 * time.Millisecond)
	r := b.post(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	assert.Equal(t, http.StatusAccepted, r.status, r.body)
	reply := <-done
	assert.Contains(t, reply.body, `"id":7`)
	assert.Contains(t, reply.body, "finished")
}

func TestHTTPBadCursor(t *testing.T) {
	c := newRawHTTP(t, newWorld(t))
	c.initialize(t)
	for _, cursor := range []string{`"!!!"`, `"Zm9v"`, `42`, `"` + strings.Repeat("A", 5000) + `"`} {
		r := c.post(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":`+cursor+`}}`)
		rep := decodeReply(t, r)
		require.NotNil(t, rep.Error, "cursor %.40s: %s", cursor, r.body)
		assert.Equal(t, -32602, rep.Error.Code)
		assert.Contains(t, rep.Error.Message, "invalid cursor")
		assert.Contains(t, rep.Error.Message, "without a cursor", "says how to go on")
		assert.NotContains(t, rep.Error.Message, "base64", "no Go internals")
		assert.NotContains(t, rep.Error.Message, "illegal")
		assert.Less(t, len(rep.Error.Message), 600, "a long cursor is not echoed whole")
	}
	for _, params := range []string{`{}`, `{"cursor":""}`, `{"cursor":null}`} {
		r := c.post(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":`+params+`}`)
		rep := decodeReply(t, r)
		assert.Nil(t, rep.Error, "%s: %s", params, r.body)
		assert.Contains(t, string(rep.Result), `"name":"bash"`, params)
	}
}
