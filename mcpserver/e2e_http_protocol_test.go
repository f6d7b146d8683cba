//go:build linux

package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"testing"

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
