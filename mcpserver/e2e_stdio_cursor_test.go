//go:build linux

package mcpserver_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStdioBadCursor: over stdio as over HTTP (TestHTTPBadCursor), a
// tools/list cursor that no answer handed out is refused with −32602 and
// a message that says how to go on, and the server keeps serving.
func TestStdioBadCursor(t *testing.T) {
	w := newWorld(t)
	cmd := exec.Command(cordonBin, w.serveArgs("--log-level", "error")...)
	cmd.Env = w.env()
	c := startRaw(t, cmd)
	type reply struct {
		Result json.RawMessage
		Error  *struct {
			Code    int
			Message string
		}
	}
	list := func(params string) reply {
		line, err := c.call("tools/list", json.RawMessage(params))
		require.NoError(t, err)
		var r reply
		require.NoError(t, json.Unmarshal(line, &r), string(line))
		return r
	}
	for _, cursor := range []string{`"!!!"`, `"Zm9v"`, `42`, `"` + strings.Repeat("A", 5000) + `"`} {
		r := list(`{"cursor":` + cursor + `}`)
		require.NotNil(t, r.Error, "cursor %.40s", cursor)
		assert.Equal(t, -32602, r.Error.Code)
		assert.Contains(t, r.Error.Message, "invalid cursor")
		assert.Contains(t, r.Error.Message, "without a cursor", "says how to go on")
		assert.NotContains(t, r.Error.Message, "base64", "no Go internals")
		assert.Less(t, len(r.Error.Message), 600, "a long cursor is not echoed whole")
	}
	// The method named with JSON escapes is the same method.
	c.in.Write([]byte(`{"jsonrpc":"2.0","id":999,"method":"tools\/list","params":{"cursor":"Zm9v"}}` + "\n"))
	var line []byte
	for !strings.Contains(string(line), `"id":999`) {
		var err error
		line, err = c.out.ReadBytes('\n')
		require.NoError(t, err)
	}
	assert.Contains(t, string(line), `"code":-32602`, string(line))
	assert.Contains(t, string(line), "invalid cursor")
	for _, params := range []string{`{}`, `{"cursor":""}`, `{"cursor":null}`} {
		r := list(params)
		assert.Nil(t, r.Error, params)
		assert.Contains(t, string(r.Result), `"name":"bash"`, params)
	}
	_, err := c.call("ping", map[string]any{})
	assert.NoError(t, err, "still serving")
}
